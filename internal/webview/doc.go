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
// # Several data directories
//
// A crawl split across processes leaves one data directory per worker,
// and a worker's drop may name a page another worker stored
// (storage.Drop.DuplicateOfURL). The view shows the sources as one crawl:
// such a drop joins the cluster of its page in whichever source stores
// it, found by crawler.DataSet.KeptPage (what `crawl dups` uses), and its
// pair and label read the page from there; drops whose page no source
// stores form a cluster under the URL they name. The overview sums the
// counts and lists each source's own.
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
// again after the crawl progressed: within the request when that is cheap,
// else in the background at most once per Options.Refresh. At 100,000
// drops (BenchmarkPages, shared 2-core machine at load 21) the overview
// takes 2 ms, the duplicates 17 to 40 ms filtered or searched, a pair
// under 1 ms; New takes 6 s (BenchmarkNew).
package webview
