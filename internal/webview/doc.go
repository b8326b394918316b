// Package webview serves a crawl's figures and duplicate decisions to a
// browser: `crawl serve` for a stopped crawl's data directories and
// `crawl --ui` for the crawl that is running.
//
// # Pages
//
// Overview (counts, pages per second, hosts, configuration), Duplicates
// (clusters of a stored page and its drops, filtered, searched, sorted by
// size or by closeness to k, paginated), a pair (both texts side by side
// with the word diff of internal/worddiff, fingerprints, distance, the
// heaviest differing features, and buttons that label the pair),
// Distances (the histograms of `crawl stats`, drawn), Failures and skips,
// and Labels (download the labels as a pairs file for `crawl eval`).
//
// # Design
//
// Pages are rendered on the server with html/template, which escapes page
// titles, URLs and texts (all untrusted) for the context they land in;
// charts are inline SVG computed here; the stylesheet and the one script
// (the labels, kept in the browser's localStorage) are embedded, so the
// view works offline. A Content-Security-Policy allows only the view's own
// script and style.
//
// # Cost
//
// New reads every page and drop header once into memory (about 200 bytes
// a drop) and computes the nearest-neighbour histogram
// (crawler.NearestNeighbours); list pages then filter and page through
// memory, and a pair reads two records. A live crawl's snapshot is read
// again when older than Options.Refresh. See BenchmarkPages for the times
// at 100,000 drops.
package webview
