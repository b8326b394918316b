// Package frontier is the crawl's to-do list and its URL-seen set: a
// persistent, polite, breadth-first queue of canonical URLs stored in the
// bbolt database the crawler shares with the page store and the ContentSeen
// index.
//
// # Idea
//
// Every URL is canonicalised (Canonical) and looked up in the seen bucket;
// a new one is marked seen and appended to its host's queue in the same
// write transaction, so "seen" and "queued" never disagree. AddTx, DoneTx,
// RetryTx and FailTx work inside the caller's transaction: the crawler
// stores a page, records its fingerprint, marks it done and queues its links
// in one commit, and a crash leaves all of that or none of it.
//
// Each host (host with port, see HostKey) has its own queue bucket keyed by
// depth and a global sequence number, big-endian, so a cursor's first key is
// the host's shallowest, oldest URL. Memory holds only a summary per host
// (that first key, requests in flight, last request start, Crawl-delay):
// Next picks, among hosts whose politeness allows a request now, the one
// with the smallest first key — breadth-first across hosts and FIFO within
// a depth as far as politeness permits — and moves that URL to in flight in
// one transaction. URLs to retry wait in a bucket ordered by time until they
// are due, so a backing-off URL does not block its host's queue.
//
// A URL's life: pending → in flight → done:<outcome> | failed:<reason>, or
// back to pending by Retry. New returns URLs left in flight by a crash or a
// stop to their old queue position, so a resumed crawl fetches at most those
// again and never a done or failed one.
//
// # Queue
//
// Queue is the frontier as a crawler drives it without a bbolt
// transaction: Add, Next, Finish (done and links in one step), Retry, Fail,
// Alias. *Frontier implements it; frontier/redisfrontier implements it on a
// Redis server shared by many worker processes. Package frontiertest holds
// the contract suite both pass.
//
// # Costs
//
// Add: one seen look-up and two puts per URL, about 8 µs per URL in batches
// of 50 without fsync. Next: one write transaction, so one fsync unless the
// database is opened with NoSync (about 2-5 ms on the shared development
// VM), plus an in-memory scan of the hosts that have pending URLs (about
// 25 ns per host: 25 µs at 1,000 hosts). Done, Retry, Fail: one small write,
// no extra fsync when done inside the caller's transaction. Memory: about 200 bytes per host
// with pending or in-flight URLs, independent of the number of URLs (100,000
// pending URLs on 1,000 hosts: about 2 MB of Go heap). New reads one key per
// host. Canonical: about 10 µs for a typical URL (the WHATWG parser
// allocates a lot); inputs over 8 KiB are rejected before parsing because
// the parser is quadratic in the number of path segments.
//
// # Caveats
//
// Memory-resident summaries change only when a transaction commits
// (tx.OnCommit); bbolt runs commit handlers after releasing its writer
// lock, so they may run out of order, and the summaries carry versions to
// stay right. Never hold a lock of your own that a commit handler could need
// while calling into the frontier; the frontier's own lock is only ever taken
// inside or after a transaction, never while waiting for one.
//
// Politeness state (last request start, SetHostDelay) lives in memory: after
// a restart the first request to each host may come sooner than its delay.
// Options.PerHostDelay counts from request start, not from completion.
//
// Callers pass canonical URLs to Add; Add only checks their shape cheaply.
// Attempts count failed attempts; the frontier does not decide when to give
// up — the caller calls Fail.
//
// One Frontier per bucket per process: two would keep separate politeness
// state and hand out the same URLs' slots twice.
//
// Close stops Next only: in-flight pages can still be completed. The
// database belongs to the caller, who closes it after the last Done.
package frontier
