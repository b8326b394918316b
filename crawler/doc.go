// Package crawler wires the stages of Simcrawl together and is the only
// package that imports colly.
//
// A Fetcher does one synchronous GET per call on a per-call colly clone:
// bytes are returned as sent (no charset conversion, no unzipping), cut at
// MaxBodySize and marked truncated; robots.txt is handled here per host with
// a TTL, and never read as allow-all when it fails.
//
// A Crawler runs N workers. Each takes the next URL the frontier allows
// (per-host politeness, breadth-first), fetches it with a Fetcher (colly
// underneath, robots.txt obeyed by our own cache), extracts the article text
// (package extract), fingerprints it (package contentseen), and then decides
// and records the page's fate in ONE bbolt write transaction over the data
// directory's single file:
//
//   - an exact copy (same text digest) of a stored page: dropped, reason "exact";
//   - a stored page within k bits: dropped, reason "near";
//   - otherwise stored, indexed, and its in-scope links queued.
//
// Because the store, the index and the frontier live in one file and change
// together, "stored" and "indexed" never disagree after a crash, and a URL is
// marked done only with its outcome. A dropped page's drop-log line (JSON
// Lines) is written right after that commit, under a lock that keeps commits
// and lines in one order: a failed commit leaves no line, and a crash
// between commit and line leaves it missing until the next Open, which
// completes (or trims) the log from the store, the truth.
//
// Cost: one fsync'd transaction per page, about a millisecond, far below the
// fetch and extraction time of a page. Caveats: which of two copies is kept
// depends on which is committed first; with several workers that is not
// strictly breadth-first order.
//
// With Options.Distributed the Crawler is one worker of a crawl shared by
// several processes (distributed.go, process_shared.go): URLs come from a
// shared frontier.Queue and pages are judged on a shared
// contentseen.Shared with the same judge. The one transaction then holds
// the page (or the drop) and the page's claim on the shared index; the
// claim is confirmed after the commit (and again 2 s later, for a Redis
// that lost its last second), then the URL is finished in the queue with
// its links. A crash between the commit and the confirm is healed by the
// next Run on the directory; one between the claim and the commit by the
// claim's lease. Cost per page, measured by `go run ./internal/crawlbench
// -workers 1,2,4` (see the README's Many machines).
package crawler
