// Package redisfrontier is a frontier.Queue kept in Redis (7.0 or later)
// and shared by any number of crawler worker processes: per-host queues,
// politeness held across all workers, breadth-first order, a URL-seen set,
// leases that return a dead worker's URLs to the queue, and a global
// stored-pages budget. Every operation is one Lua script, so each is
// atomic and costs one round trip; FinishWith sends Finish in one pipeline
// with the caller's commands (a stored page's confirm in the shared
// index).
//
// # Keys
//
// All keys of crawl NAME start with simcrawl:{NAME}:fr: (P below):
//
//	P meta          hash: format, per_host_inflight, per_host_delay
//	P url           hash: URL -> state: p pending, i in flight, d:<outcome>, f:<reason>
//	P n             hash: counters pending, inflight, done, failed, hosts
//	P seq           counter: FIFO order of queued URLs
//	P d:<host>      zset: the depths at which host has queued URLs
//	P q:<host>:<d>  list: host's queued records at depth d, oldest first
//	P ready         zset: hosts that may be fetched now, by head (depth<<40 | seq)
//	P wait          zset: hosts waiting only for their delay, by time allowed (ms)
//	P hin           hash: host -> URLs in flight
//	P last          hash: host -> start of its last request (ms)
//	P delay         hash: host -> SetHostDelay (ms)
//	P retry         zset: host\nrecord, by time due (ms)
//	P fly           hash: URL -> host\nworker\nstart\nrecord of a leased URL
//	P w:<worker>    set: URLs leased to worker
//	P workers       zset: worker -> lease expiry (ms)
//	P clock         the newest script time (ms), to detect outages
//	P stored        counter: pages claimed from the max_pages budget
//	P once:<id>     the reply of call id (Next, Add, Alias, ClaimPage,
//	                ReturnPage) for its retries; expires after 2 LeaseTTLs
//	P scope         hash: from_seeds 1 when the crawl's scope is its seeds'
//	                hosts; host:<H> -> the seed that answered from host H
//	                (scope.go: every worker crawls those hosts too)
//
// A record is the JSON array [seq, depth, url, source, attempts, seed,
// lasterr]. Other packages keep their keys beside these under
// simcrawl:{NAME}: (the same hash tag), never under P.
//
// # Politeness and order
//
// Next runs at Redis's clock (TIME), so workers' clocks need not agree. A
// host is in ready when it has queued URLs, fewer than PerHostInFlight in
// flight across all workers, and its delay (the larger of PerHostDelay and
// SetHostDelay, counted from its last request start) has passed; it is in
// wait, scored by the time its delay passes, when only the delay holds it
// back; in neither when it is at its in-flight limit or has nothing
// queued. Next moves due hosts from wait to ready, pops the ready host
// with the smallest head (lowest depth, then oldest URL: breadth-first
// across hosts as far as politeness allows, and within each host), leases
// the URL, stamps the host's last start and puts it back in wait. Because
// the pop and the stamp are one script, two request starts to a host are
// never closer than its delay, whichever workers make them.
//
// SetHostDelay (a robots.txt Crawl-delay) takes effect in this process at
// once and reaches Redis with the worker's next Next or renewal; until
// then another worker may start one request at the default delay.
//
// # Leases
//
// A URL handed out is leased to the worker: recorded in fly and w:<worker>,
// and the worker's entry in workers holds an expiry that every script of
// the worker (and a goroutine every LeaseTTL/3) pushes LeaseTTL ahead.
// When a worker dies its entry expires, and the next Next of any worker
// returns all its URLs to the front of their queues, atomically. Leave
// does the same at once for a worker that stops cleanly.
//
// Lost replies are healed both ways. A Next whose reply never arrived is
// sent again and hands out the URL its first run leased (its call id, see
// below); one abandoned (ctx ended) leaves a URL leased to a worker that
// does not know it: the renewal sends the URLs the worker holds, and
// leases older than LeaseTTL that it does not hold go back to the queue. A completion
// whose lease expired is still accepted if no other worker has taken the
// URL (its queue entry becomes stale and is skipped when popped); a retry
// of a completion that did happen is recognised by the URL's state. The
// calls that a second run would answer differently (Add's count, Alias's
// seen, the budget's claim and return) carry a random call id, and a
// second run of the same call, within 2 LeaseTTLs, returns the first
// run's reply and changes nothing: a lost Alias reply does not turn a new
// redirect target into a "seen" one whose page is never stored. A key
// costs 104 to 152 bytes (MEMORY USAGE, Redis 7) for two LeaseTTLs: with
// the default lease, 10 to 20 MB at 1,000 pages per second (a Next and a
// claim or two per page).
//
// A gap of more than half a LeaseTTL since any script ran means Redis was
// unreachable: the first script after it renews every worker's lease, so
// a restart does not hand out the URLs of workers that are still fetching.
//
// Drained means nothing pending and nothing in flight under any lease,
// live or not yet reclaimed: Next returns frontier.ErrDrained only then,
// and waits for the leases of dead workers to expire first.
//
// # Budget
//
// ClaimPage(ctx, max) is an atomic check-and-increment of P stored: a
// worker claims one page before it commits a stored page and calls
// ReturnPage if the commit fails or the page turns out not to be stored.
// The sum of claims never exceeds max across workers; a worker that dies
// between claim and store leaves its claim taken (the budget errs on the
// side of storing fewer pages, by at most one per dead worker).
//
// # Redis restarts and lost writes
//
// While Redis is unreachable, restarting or loading, every call retries
// with backoff (50ms doubling to 2s) until its context ends; Close ends a
// waiting Next. Scripts are loaded again after a restart by go-redis
// (EVALSHA falls back to EVAL).
//
// With appendonly yes and appendfsync everysec, a crash loses at most the
// last second of writes, as whole scripts (a script's effects are one
// MULTI/EXEC in the AOF), so the keys stay consistent with each other.
// What that second costs:
//
//   - a lost Next: the URL is pending again in Redis while a worker fetches
//     it. The worker's Finish still completes it if nobody took it; if
//     another worker did, the URL is fetched twice and the first Finish
//     returns frontier.ErrNotInFlight (ContentSeen drops the second copy).
//   - a lost Finish (done and links together): the URL is still leased to
//     the worker, which no longer holds it, so its renewal returns it to the
//     queue after LeaseTTL and it is fetched again, links and all. Nothing
//     is lost; the page is fetched twice.
//   - a lost Add of seeds: the seeds are not queued; run the seeding
//     command again (Add skips what is known).
//   - a lost Retry or Fail: as a lost Finish (fetched once more).
//   - lost claims of the budget: up to one second of claims are given back,
//     so a crawl may store that many pages past max_pages.
//
// So a URL is never lost and at most one second of work is fetched again.
//
// A server that lost the crawl's keys altogether (restarted without its
// append-only file, flushed, evicting keys under a maxmemory policy) is
// told apart from a finished crawl by the meta hash: every script checks
// it first, and without it writes nothing and fails with ErrLost, rather
// than Next reporting the crawl drained or Add starting a crawl without
// its meta.
//
// # Redis Cluster
//
// All frontier keys of one crawl share the hash tag {NAME}, so they sit in
// one slot of one master, and every script stays atomic there (the
// scripts build host keys from the prefix; they are in the declared key's
// slot). One master therefore holds one crawl's frontier and runs all its
// scripts; crawls spread across masters by their names' slots.
//
// Open takes a redis.ClusterClient as well as a Client; on a cluster it
// asks every node for its version (go-redis sends INFO to every master
// but returns one reply) and loads the scripts into every node (go-redis's
// ClusterClient.ScriptLoad does). Tested on a local cluster of three
// masters (redistest.StartCluster), through a ClusterClient:
// TestClusterQueueContract runs the frontier contract (frontiertest) and
// finds no EVAL on any master; TestClusterOneSlotPerCrawl finds every key
// of a crawl, per-host queues included, in the slot of {NAME} on the
// master serving it, and two crawls on two masters. The package's other
// tests (leases, lost replies, restarts, lost writes) run on a single
// server only, the restart and lost-write ones killing it; a failover and
// a slot migrating during a crawl were not tried.
//
// The plan past one master: S shards with tags {NAME/0} ... {NAME/S-1}, a URL's shard chosen
// by a hash of its host, so a host's queues, politeness state and its
// URLs' seen entries share a slot and stay atomic; Next asks the shards in
// turn (one script each, one round trip when the first has work);
// Finish groups the links by shard and pipelines one script per shard,
// queueing the links before marking the page done, so a crash between
// them costs a refetch, never a lost link; drained is every shard drained;
// the budget counter lives in shard 0.
//
// Arithmetic for 1 billion pages, from the figures below: the URL-seen
// hash costs 147 B per URL ever queued (URLs of 78.5 bytes: about the
// URL's length plus 70), 147 GB for the 1e9 URLs of the pages fetched and
// as much again per billion found and never fetched; a queued URL costs
// 184 B more while it waits (its record, with its source URL, in its
// host's list), 184 GB for a billion waiting at the peak. At 25 GB of data
// per master that is 6 masters for seen and 8 for a billion queued;
// keeping a 64-bit URL fingerprint instead of the URL in the seen hash
// would cut the 147 B to about 75 (estimated, not built). The shared
// index's share is in package redisindex's Cluster plan.
//
// # Memory and speed
//
// Measured with 1M URLs queued by Add in calls of 500 over 50,000 hosts
// (Zipf sizes, s=1.1), URLs of 78.5 bytes on average, each with a source
// URL of about 35 bytes, one worker, the test server (internal/redistest:
// loopback, memory only), on the shared 2-core machine at load 12 to 15:
//
//	go test -run '^$' -bench Queue -benchtime 20000x -timeout 0 ./frontier/redisfrontier/
//
//	Redis memory per queued URL     315 B  (INFO used_memory, divided by n;
//	                                        the url hash 131 B of it)
//	per URL done (URL-seen only)    147 B  (after all 1M were taken and
//	                                        finished; the url hash 139 B)
//	Next                            p50 77 µs, p99 3.0 ms
//	Finish, no links                p50 40 µs, p99 2.9 ms
//	round trips per Next + Finish   2.0
//
// The URL-seen cost is the url hash's field (the URL), its state ("p"
// while pending, "d:<outcome>" when done), the hash's entry and slot. Next
// and Finish were timed over the first 20,000 of the 1M; the p99 is the
// machine's load. With a crawl's politeness (per-host delay) Next also
// waits for hosts, which this does not measure.
//
// # Caveats
//
// PerHostInFlight and PerHostDelay hold across the crawl and must be the
// same for every worker (Open checks). Next asks Redis at least every Poll
// while it waits, since other workers' changes are not pushed to it.
// Hosts idle past their delay are forgotten (hin, last); hosts that go
// idle within their delay keep two small hash entries. Stats are the
// counts returned with this worker's newest call.
package redisfrontier
