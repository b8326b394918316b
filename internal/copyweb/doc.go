// Package copyweb builds a local web of copies from real pages and measures
// how well a crawl drops the copies and keeps everything else.
//
// Generate takes corpus pages (LoadCorpus reads ../shared/corpus:
// readability cases, gne-zh, trafilatura pages) and makes, deterministically
// from a seed, copies of every Kind: exact mirrors; ads, view counters and
// date lines, comment threads and related boxes injected; the article moved
// into another site's chrome (templates of our own); retitled; 1-3% of the
// words edited; a paragraph removed; GBK re-encoded, declared once in the
// HTTP header and once only in a <meta>; converted to Traditional script
// with OpenCC; reposted with a source line; copies of copies. Beside them are
// the pages that must be kept: the originals (among them the corpus's
// different articles on one template), 30-40% rewrites, short pages on one
// shared template, and index pages. The ground truth is a cluster per
// article: a page is a copy of every other page of its cluster.
//
// Web.Handler serves the web (robots.txt allows only its pages, so the
// corpus pages' own relative links are not followed); Crawl crawls it with
// the real pipeline and CrawlOptions (the options `crawl --seeds` builds
// from the default config) and reads the store and the drop log; Score
// counts per kind. A copy counts as caught (TP) when it is dropped as a
// duplicate of a page of its cluster, or when it is its cluster's one
// stored page; a copy stored beside another page of its cluster is a miss
// (FN); any page dropped for a page outside its cluster, and any page of a
// kept kind dropped at all, is a false drop (FP) — except an original
// dropped as a duplicate of its own copy, which leaves its cluster stored
// once. Which page of a cluster is kept depends on crawl order, so the
// score accepts either.
//
// Cost: the bounded web (Bounded, about 250 pages) is generated in about a
// second and crawled in seconds; Big takes every usable corpus page
// (minutes). Nothing from the corpus is written anywhere but to the test
// server's responses.
package copyweb
