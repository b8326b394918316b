// Package redisindex is a contentseen.Shared kept in Redis (7.0 or later):
// the ContentSeen index of a distributed crawl, shared by any number of
// worker processes, whose check-and-insert is atomic across them. It is
// the permuted-table index of package contentseen (same layouts, same
// multi-probe radius) with the entries a worker needs to judge a page
// against another worker's, and the Shared protocol: Lookup, judge in Go,
// Claim (atomic with a check of the claims made since the look-up),
// store, Confirm; or, as the crawler runs it (contentseen.LookupClaimer),
// LookupClaim (look-up and claim in one atomic step), judge in Go, store,
// Confirm, or Release for a copy.
//
// # Keys
//
// All keys of crawl NAME start with simcrawl:{NAME}:cs: (P below), beside
// the frontier's simcrawl:{NAME}:fr: and under the same hash tag, so on a
// Redis Cluster one crawl's keys share a slot:
//
//	P meta   hash: format, layout, k, lease, max_lag (Open refuses others);
//	         run, gen, settle: the server's run_id the scripts last saw,
//	         the generation and its settle window's end (ms; see below)
//	P seq    counter: the last seq given; a Token is its value
//	P e      hash: seq -> entry record (binary: fingerprint, digest,
//	         sketch, its bucket in every table, ID, URL; see entry.go)
//	P pend   zset: seq of a pending entry -> lease end (ms, Redis's clock)
//	P d      hash: digest (16 bytes) -> the seqs with it, 8 bytes each
//	P t<i>   hash per table i: bucket (the permuted fingerprint's prefix,
//	         big-endian in whole bytes) -> 16-byte records (fingerprint,
//	         seq), the table's entries under that prefix
//
// An entry is committed when it is in P e and not in P pend. A bucket is
// read whole and written by appending (HGET, concatenate, HSET in a
// script); removing an entry (Release, purge) cuts its record out.
//
// # Operations and round trips
//
// Each operation is one script or one pipeline, loaded at Open, so one
// round trip:
//
//   - Lookup runs a read-only script that returns, in one atomic read, the
//     token, the entries with the page's digest (records and lease ends,
//     with the server's time) and every bucket the query probes: one per
//     table within the layout's K, and with multi-probe every prefix
//     within ProbeRadius(k) bits (68 buckets for k=7 on 4x16). Distances
//     to the bucket records are computed in Go, not in Lua (Lua has no
//     64-bit integers; the 1,000 records a k=7 query reads at 1M entries
//     would cost Redis, which runs one script at a time, far more than
//     sending them). Only when a record within K is not one of the
//     digest's entries does a second round trip read those entries (one
//     script). A new page and an exact copy cost one round trip, a near
//     copy two.
//   - Claim is one script: it checks that the server has not restarted
//     since the last script (its run_id, see Leases, restarts and lost
//     writes), purges up to 64 expired pending entries,
//     refuses a token ahead of P seq or more than MaxLag behind
//     (ErrStaleToken), reads the records of the seqs after the token (the
//     claims made since the look-up, usually none or a few), compares
//     fingerprints (XOR and popcount on two 32-bit halves, Lua's bit
//     library) and digests, and either returns the live ones as conflicts
//     or gives the next seq and inserts the entry as pending with a lease
//     end at Redis's TIME plus the lease. Because the check and the insert
//     are one script, of two claims within K the second always sees the
//     first. A Claim retried after its reply was lost finds its own
//     pending record (same bytes, ID included) and returns it.
//   - LookupClaim is one script: it purges up to 64 expired pending
//     entries, looks for this call's own pending entry (the same record,
//     ID included, in the fingerprint's bucket of table 0: a call retried
//     after its reply was lost returns it), reads what Lookup reads, and
//     unless a live entry has the page's digest (an exact copy) inserts
//     the entry as pending, as Claim does. The candidates are every live
//     entry at that step and every later claim sees the page's entry, so
//     the check-and-insert is as atomic as Lookup then Claim with no claim
//     between them. The script computes no distance, as Lookup does not:
//     a near copy, and a page within K of another on the same template,
//     is claimed too, and the caller releases the claim of a copy
//     (ReleaseOn, in one pipeline with the frontier's Finish) or keeps it
//     while it waits for a pending copy to be settled (Entries, one
//     script, reads those entries again: contentseen.Rejudge).
//   - Confirm and Release are one script each, idempotent, checking the
//     entry's ID so that a seq given again is never confirmed or released
//     by its old claimant (after a restart seqs jump ahead, so a seq is
//     not given again; the check stays). ConfirmBatch sends the
//     confirms of many claims in one pipeline (the worker's second
//     confirms, once a second), and ConfirmOn stages a confirm in a
//     caller's pipeline (redisfrontier's FinishWith).
//
// So through LookupClaim the judge step of a new page or an exact copy is
// one round trip and of a near copy two (its entries), plus one for each
// look at a pending copy it waits for; the confirm, or a copy's release,
// rides in one pipeline with the frontier's Finish and the worker's next
// Next (ConfirmOn, ReleaseOn, redisfrontier's FinishNext: single
// EVALSHAs on the crawl's slot). A stored new page costs a worker two
// round trips, a near copy three (the crawler does so when the frontier
// and the index share a client; see the README for the measured figures).
// Through contentseen.Judge (Lookup, Claim, Confirm) a new page's judge
// step is three round trips. What LookupClaim costs Redis beyond Lookup
// and Claim: a near copy's entry is written and cut out again (Release
// rewrites its buckets), which Lookup then Claim never wrote.
//
// Measured on the shared 2-core machine (load 8 to 17 from other
// engineers' jobs), the test server (internal/redistest: loopback, memory
// only), random committed entries loaded with Load, 4x16 layout, k=7;
// medians of 3 runs of 10,000 operations, 1M and 10M in one process:
//
//	SIMCRAWL_BIG=1 go test -run '^$' -bench 'Benchmark(Lookup|Judge)/n=1e\+0[67]/k=7' \
//	    -benchtime 10000x -count 3 -timeout 0 ./contentseen/redisindex/
//
//	                            1M entries        10M entries
//	                            p50     p99       p50     p99      rt/op
//	Lookup, new page            174 µs  4.1 ms    578 µs  5.0 ms   1
//	Lookup, near copy           199 µs  4.1 ms    633 µs  8.0 ms   2
//	judge step of a new page    249 µs  3.8 ms    697 µs  8.1 ms   3
//	(Lookup, Claim, Confirm)
//	client bytes allocated/op   26 KB             187 KB
//	Redis memory (used_memory)  478 B/fp          495 B/fp
//	load with Load              52 s              22 min 39 s
//	                            19,100/s          7,360/s
//	Redis CPU per loaded entry  17.5 µs           43.7 µs
//	load with BulkLoad          53 s              13 min 2 s
//	(separate runs, load 14-20) 18,800/s          12,800/s
//	Redis CPU per loaded entry  5.8 µs            11.7 µs
//
// At k=7 a query reads 68 buckets (17 prefixes in each of the 4 tables)
// of N/65,536 records each: about 1,000 fingerprints (16 KB) at 1M and
// 10,400 (166 KB) at 10M. That reply, built by Redis and parsed by the
// client, is the time, and it grows with N: 4x16 is a layout for a few
// million pages at k=7, not for 10M (see the plan below). The p99 is the
// machine's load. An earlier run at 1M (load 11 to 15, -benchtime 20000x)
// gave Lookup p50 231 µs, p99 4.6 ms and a judge step of 300 µs, 5.3 ms.
//
// Memory, by key (MEMORY USAGE ... SAMPLES 0, divided by n), 1M / 10M: P e
// 296 / 315 B per entry, P d 80 / 92, each table 20.8 / 17.9 (16 bytes of
// record plus its share of a bucket: about 15 records a bucket at 1M, 150
// at 10M), so 83 / 72 for 4x16. P e and P d grow because their hash
// tables double at 2^23 entries (8 bytes a slot: 8.4 B per entry at 1M,
// 13.4 at 10M). In P e an entry is its record, here 245 bytes: version 1,
// fingerprint 8, digest 16, sketch 4 + 128, table count and width 2, its
// bucket in each table 8 (the scripts remove an entry from its buckets
// with them, Lua having no 64-bit permutation), ID length 2, ID 15 and URL
// 61 (the benchmark's); jemalloc gives it 256 bytes, plus the field (the
// seq in decimal, 16), the hash's entry and slot. A crawl's records are
// longer: a worker's entry ID is its name and page ID (about 23 bytes)
// and URLs average about 75, which puts the record in jemalloc's next
// class, 320 bytes: 64 B more per entry (measured: a hash of 100,000
// values of 245 and of 267 bytes, MEMORY USAGE 306.5 and 370.5 B a
// field). Nothing cheap cuts this: the sketch verifies candidates, the ID
// and URL name the original in drop logs, and the 11 bytes of version,
// counts and bucket names would not leave the class. The listpack encoding
// (hash-max-listpack-entries and -value) applies only to small hashes;
// splitting P e into hashes of at most 128 records, with
// hash-max-listpack-value 320, would save the hash entry, slot and sds
// headers (about 50 B an entry, 10%) at the price of a new key layout and
// a scan of up to 128 records per read: not done.
//
// Load is bounded by Redis's CPU, not by round trips: the client spends
// under 2 µs an entry (making, encoding and writing it; 1.7 s of CPU for
// 1M) and waits for the server. A profile of redis-server while loading
// (perf record, 300,000 entries) gave
// about 45% in the Lua interpreter (building each batch's strings) and
// 45% in the hash commands themselves (HMGET 25%, HSET 19%, mostly
// dictFind: 5 lookups and 5 writes per entry in tables of millions of
// fields, cache misses). Per entry the cost grows with N, since every
// insert rewrites its 4 bucket values whole (HGET, concatenate, HSET of
// 150 records at 10M): 17.5 µs of Redis CPU at 1M, 43.7 at 10M. Pipelining
// several loads deep (3 pipelines in flight on 3 connections) was slower
// on this machine, 25,600 to 31,400 entries/s against 37,000 for one
// (300,000 entries, load 9.5): the server's core is the limit and the
// client's encoding, overlapped, only takes CPU from it. At load 4.5
// 1M loaded in 22 s (45,000/s); the 161 to 205 s of an earlier session
// were load 17 to 20, and the 52 s above load 8 to 10.
//
// BulkLoad writes each bucket once per call instead of once per entry:
// it takes the seqs of all its entries at once and builds the buckets,
// digests and records in the client, so it is for an index no worker is
// using (a worker's token could pass entries not yet written). The keys
// are the same byte for byte (TestLoadSameKeysAsClaimConfirm), and so is
// the memory, 478 and 495 B/fp. Redis's CPU per entry drops 3 to 3.7
// times (table above; the benchmarks now load their index with it, in
// calls of 500,000), and the client's work grows: at load 14 to 20 the
// client and the server shared the cores, 1M took as long as with Load
// at load 8 to 10 and 10M 13 minutes instead of 23. At 200,000 entries
// (go test -run '^$' -bench BenchmarkLoad -benchtime 1x -count 3, load 16
// to 20, medians, each loader's runs one after the other): Load 14,700
// entries/s and 16.3 µs of Redis CPU each, BulkLoad 35,000/s and 5.6 µs.
//
// # Leases, restarts and lost writes
//
// Lease ends are on Redis's clock (TIME inside the scripts), so workers'
// clocks need not agree. Lookup and Claim ignore expired pending entries;
// Claim and Confirm purge them (64 per call, the rest next time).
//
// While Redis is unreachable, restarting or loading, every call retries
// with backoff (50ms doubling to 2s) until its context ends; the error
// then names the server. Open loads the scripts; after a restart go-redis
// loads them again (EVALSHA falls back to EVAL once).
//
// Every script first checks that P meta exists: a server that lost the
// crawl's keys (restarted without its append-only file, flushed, evicting
// under maxmemory) would otherwise serve an empty index, and copies of
// every page stored before would be stored again. Each call then fails
// with ErrLost and writes nothing, as the frontier's do.
//
// Every script's writes reach the append-only file as one MULTI/EXEC, so
// the keys stay consistent with each other whatever is lost. A process
// crash (kill -9) loses nothing the server answered, since the AOF is
// written before replies are sent and the OS keeps it, unless a slow disk
// made Redis postpone that write (it logs "Asynchronous AOF fsync is
// taking too long"). What appendfsync everysec can lose is the last
// second or two before an OS crash, power loss or failover to a replica
// that lagged. Redis 7.0 cannot make a reply wait for the fsync (WAITAOF
// is 7.2), so the index heals such a loss from the workers' memory
// (heal.go):
//
//   - Each Index remembers the claims it made, confirmed or released in
//     the last 10 s (counted back from its last call that found the server
//     unrestarted): the entry record, its seq, lease end and state. About
//     250 bytes a claim.
//   - The meta hash records the run_id of the server (INFO server, read
//     inside the scripts) and a generation. The claim, heal and replay
//     scripts compare it with the server's own: a restart or a failover
//     starts a new generation, moves the seq counter 2^20 ahead (every
//     token from before is then stale, whatever was lost) and opens a
//     settle window (Options.Settle, 10 s) in which Claim answers
//     "settling": the claimant replays its own claims, waits for the
//     window's end and looks up again (ErrStaleToken).
//   - Every worker replays within the window: the crawler calls Heal once
//     a second (one script, one round trip, when nothing restarted), and
//     Claim and a Confirm that finds its claim lost do too.
//     The replay script writes each remembered claim again, idempotently:
//     one still there is left (committed again if its confirm was lost,
//     removed if its release was); one gone is inserted with a new seq,
//     committed if it was confirmed, pending if its lease is still ahead.
//     The Index maps the old seq to the new one for Confirm and Release.
//     Lookups, drops and confirms go on during the window.
//   - A look-up cut in two by the restart (LookupClaim's script on the
//     old server, the entries of its near candidates read from the new
//     one, which lost them) finds a candidate gone: it releases its claim
//     and looks up again, after the window (TestHealLookupCutByRestart);
//     a copy waiting for a pending page that is gone does the same
//     (contentseen.Rejudge).
//
// The run_id check costs Redis about 5 µs a claim (usec_per_call of INFO
// commandstats for a script that only returns, 0.57 to 1.50 µs, and one
// that also reads run_id from INFO server, 5.31 to 7.07 µs: 5 interleaved
// runs of 20,000 calls by redis-benchmark -c 4 at load 11); Redis runs
// scripts one at a time, so it is throughput, not latency, that pays.
//
// So a page claimed or confirmed in the lost second is in the index again
// before any claim judged after the restart, and its copy is dropped, not
// stored beside it (TestHealLostClaim cuts the append-only file back to a
// moment T, then judges a copy of a page confirmed after T). What still is
// not healed:
//
//   - a worker that cannot replay within the window (its process or
//     machine lost at the same time as Redis, a network partition, a
//     process stalled for 10 s): its claims of the lost second are written
//     again only when it comes back (a restarted process confirms the
//     claims its data directory recorded), and a copy judged in between is
//     stored too. Heal reports such a replay as late; the crawler logs it.
//   - a disk so slow that Redis postponed its writes by more than the 10 s
//     a worker remembers.
//   - lost releases and purges: the entry comes back pending and expires;
//     a copy judged meanwhile waits for it (fetched again later).
//   - Load is not remembered (it is not retried either).
//
// With appendfsync always every answered write is on disk and none of
// this arises, at the cost of an fsync per event-loop turn (Redis groups
// the writes of all clients).
//
// # Past one Redis: Redis Cluster
//
// Open takes a redis.ClusterClient as well as a Client. On a cluster it
// asks every node for its version (go-redis sends INFO to every master
// but returns one reply) and loads the scripts into every node (a
// pipelined SCRIPT LOAD has no key and reaches one node, and the first
// call of each script on a master it missed would send the script's
// source with EVAL). Tested on a local cluster of three masters without replicas
// (redistest.StartCluster: redis-cli --cluster create), through a
// ClusterClient:
//
//	go test -run 'TestCluster' ./contentseen/redisindex/ ./frontier/redisfrontier/
//
// TestClusterSharedContract runs the whole Shared contract there (each
// worker a ClusterClient of its own) and finds no EVAL on any master;
// TestClusterOneSlotPerCrawl finds every key of a crawl's index, the
// tables included, in the slot of {NAME} on the master serving it, two
// crawls on two masters, and every call one EVALSHA on its crawl's master,
// none redirected (a new page's judge step is 3 round trips, as on one
// server). Not tested on a cluster: a failover, a slot
// migrating while the crawl runs (go-redis follows MOVED and ASK, and
// retry treats TRYAGAIN, a script's reply while its keys are split by a
// migration, as transient, but none of it was run), and the restart and
// lost-write tests, which kill a single server.
//
// So today one crawl is one slot: every script is atomic on one master,
// and one master holds one crawl's index and runs all of its scripts,
// one at a time. Crawls spread across masters by their names' slots; a
// crawl's slot can be moved to a bigger master (CLUSTER SETSLOT, or
// redis-cli --cluster reshard), not split.
//
// At 495 bytes per fingerprint (measured, 4x16, 10M entries; 478 at 1M)
// a master with 25 GB of data holds about 50M pages. For 1 billion pages:
//
//   - index memory: 4x16 returns N/65,536 records per table per query
//     (15,000 at 1e9, x17 prefixes at k=7; the 10,400 records a k=7
//     query reads at 10M already made it 3.3 times slower than at 1M), so
//     at that size a layout with longer prefixes is needed. 10x28 (4
//     tables of 28-bit prefixes, 6 of 24, an exact probe per table at
//     k=3) returns 3.7 records from each 28-bit table and 60 from each
//     24-bit one, about 370 a query (6 KB). Its cost, from the measured
//     parts: P d costs 92 bytes per entry at 10M whatever the layout; P
//     e 315, but a 10x28 record holds 10 bucket names of 4 bytes (40
//     instead of 8), which puts it in jemalloc's 320-byte class with the
//     benchmark's IDs and URLs as with a crawl's: 379. A table costs 17.9
//     bytes per entry on 4x16 at 10M (150 records a bucket) and 20.8 at
//     1M (15), and a bucket costs 56 bytes besides its records (MEMORY
//     USAGE of hashes of 1M 4-byte fields with 48- and 64-byte values: 104
//     and 120 bytes a field, Redis 7.0). So a 28-bit table costs about
//     16 + 56 x 0.26 (non-empty buckets per entry) = 31 bytes per entry
//     and a 24-bit one about 18 (as 4x16's at 10M): 4 x 31 + 6 x 18 =
//     232 bytes of tables instead of 72, so 379 + 92 + 232 = 703 B per
//     fingerprint, about 700 GB. Not measured at that size. k=7 at that
//     size needs a layout made for it (NewLayout with longer blocks), at
//     more tables again.
//   - frontier and URL-seen memory (measured in redisfrontier, 1M URLs of
//     78.5 bytes on average over 50,000 hosts): 147 B per URL ever queued
//     (the URL-seen hash, kept when the URL is done) and 184 B more while
//     it waits in its host's queue (315 B per queued URL). A crawl that
//     fetched 1e9 pages queued at least those 1e9 URLs, 147 GB, plus 147
//     B for every URL it found and never fetched; a billion URLs waiting
//     in its queue at the peak add 184 GB.
//   - together: about 700 + 147 + 184 = 1,030 GB for 1e9 pages with one
//     URL seen per page fetched and a billion queued at the peak (each
//     further billion URLs seen and not fetched adds 147 GB): 42 masters
//     of 25 GB (84 with a replica each). The frontier's keys shard by
//     host (see redisfrontier), the index's as below.
//   - slots: the crawl tag {NAME} cannot spread; the index must be cut.
//     The cut that keeps Claim atomic where it matters: the claim log
//     stays under {NAME} (P seq, P pend and the records of the last
//     MaxLag claims: 4,096 x 296 B, about 1.2 MB by default), and
//     everything older, the table buckets, entry records and digests,
//     moves to S shards tagged {NAME/cs/s}, table i's bucket b in shard
//     hash(i, b) mod S, a record and a digest in shard hash(seq) mod S
//     and hash(digest) mod S. With S = 2,048 tags on the index's 29
//     masters each holds about 71 shards of 0.34 GB, and adding a master
//     moves whole shards; only the log's master carries every Claim.
//   - what stays atomic: Claim, a script on the {NAME} slot, checks the
//     claims made since the token against the log and appends to it, so
//     of two claims within K the second still sees the first. Writing the
//     claim's buckets and record to the shards follows, pipelined per
//     shard (one round trip on each master, in parallel) and idempotent;
//     a Lookup reads the token from {NAME} first and the shards after,
//     plus the log's claims not yet known to be written to the shards
//     (those after a published watermark, which a claimant raises after
//     its shard writes), so no claim falls between the two. Confirm and
//     Release touch the log slot and the record's shard: no longer one
//     atomic step, so Confirm writes the shard first and the log last, and
//     a crash between them leaves a pending entry that expires.
//   - round trips: a Lookup on 10x28 at k=3 probes 10 buckets, on up to
//     10 masters, each asked once in parallel: 2 sequential round trips
//     (the token, then the shards). A Claim is 2 (the log script, then
//     its 12 shard writes, 10 buckets, a record and a digest, in
//     parallel); a Confirm 2 (shard, then log). The judge step of a new
//     page goes from 3 sequential round trips to about 6; not built, not
//     measured.
//
// A per-prefix tag ({NAME/t<i>/<bucket>}) alone would put every bucket in
// its own slot but make no script atomic: the check-and-insert would touch
// several masters, and two workers could both insert copies. That is why
// the plan keeps a small atomic log beside a sharded bulk.
//
// # Caveats
//
// Layout, K, lease and max lag are fixed when the index is created and
// must be the same for every worker (Open checks). Every Lookup asks at K:
// a crawler whose short texts take a wider radius (contentseen.short_k 11)
// needs K=11 here, which on 4x16 reads 137 prefixes per table, 548
// buckets a query (not measured; 68 at k=7 cost about 240 µs at 1M). Release and purges
// rewrite the entry's buckets (a few KB at 10M with 4x16). Load and
// BulkLoad are not atomic as a whole and are not retried (an entry loaded
// twice would be two entries). Index is safe for concurrent use; Close does not close the
// client.
package redisindex
