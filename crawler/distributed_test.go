package crawler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/contentseen/redisindex"
	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/frontier/redisfrontier"
	"github.com/simcrawl/simcrawl/internal/demosite"
	"github.com/simcrawl/simcrawl/internal/redistest"
	"github.com/simcrawl/simcrawl/storage"
)

// distWorker opens a worker of the distributed crawl name on the redis at
// addr, sharing idx, with its own data directory.
func distWorker(t *testing.T, addr, name, worker string, idx contentseen.Shared, seeds ...string) *Crawler {
	t.Helper()
	return distWorkerWith(t, addr, name, worker, idx, nil, seeds...)
}

// distWorkerWith is distWorker with set, when not nil, changing the
// options before Open.
func distWorkerWith(t *testing.T, addr, name, worker string, idx contentseen.Shared, set func(*Options), seeds ...string) *Crawler {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { rdb.Close() })
	return distWorkerSet(t, rdb, 20*time.Millisecond, name, worker, idx, set, seeds...)
}

// distWorkerOn is distWorker with its frontier on the client rdb, polling
// every poll for URLs other workers queue.
func distWorkerOn(t *testing.T, rdb redis.UniversalClient, poll time.Duration, name, worker string, idx contentseen.Shared, seeds ...string) *Crawler {
	t.Helper()
	return distWorkerSet(t, rdb, poll, name, worker, idx, nil, seeds...)
}

// distWorkerSet is distWorkerOn with set, when not nil, changing the
// options before Open.
func distWorkerSet(t *testing.T, rdb redis.UniversalClient, poll time.Duration, name, worker string, idx contentseen.Shared, set func(*Options), seeds ...string) *Crawler {
	t.Helper()
	q, err := redisfrontier.Open(context.Background(), rdb, redisfrontier.Options{Name: name, Worker: worker, Poll: poll,
		Options: frontier.Options{PerHostInFlight: 4, PerHostDelay: -1}})
	if err != nil {
		t.Fatalf("redisfrontier.Open: %v", err)
	}
	t.Cleanup(func() { q.Close() })
	opts := distOptions(t, seeds...)
	opts.Parallelism = 4
	opts.Logger = slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	opts.Distributed = &Distributed{Queue: q, Index: idx, Worker: worker, Budget: q}
	if set != nil {
		set(&opts)
	}
	c, err := Open(opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return c
}

// distOptions are testOptions with a wider radius for short texts (K 3,
// ShortK 6 under 300 features), so that the shared index's radius (6) is
// wider than some pages' (3), as with the defaults.
func distOptions(t *testing.T, seeds ...string) Options {
	opts := testOptions(t, seeds...)
	opts.ShortK, opts.ShortFeatures = 6, 300
	return opts
}

// runWorkers runs the crawlers to the end at the same time.
func runWorkers(t *testing.T, ctx context.Context, cs ...*Crawler) []*Summary {
	t.Helper()
	sums := make([]*Summary, len(cs))
	errs := make([]error, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sums[i], errs[i] = c.Run(ctx)
		}()
	}
	wg.Wait()
	for i, c := range cs {
		if err := c.Close(); err != nil {
			t.Errorf("worker %d: Close: %v", i, err)
		}
		if errs[i] != nil {
			t.Fatalf("worker %d: Run: %v", i, errs[i])
		}
	}
	return sums
}

// sharedIndex is an in-process shared index with the test options' k.
func sharedIndex(t *testing.T) *contentseen.SharedMem {
	t.Helper()
	idx, err := contentseen.NewSharedMem(contentseen.SharedOptions{K: 6})
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

// Two workers on one Redis frontier and one shared index crawl a site with
// copies: every page is fetched once, each pair of copies is stored once
// (by either worker) and dropped once, as a single process decides, and no
// two stored pages are copies in the judge's eyes.
func TestDistributedCrawlDecidesAsOneProcess(t *testing.T) {
	srv := redistest.Start(t)
	other := httptest.NewServer(&demosite.Generated{N: 90, DupEvery: 5, IndexPage: true})
	defer other.Close()
	single := runCrawl(t, distOptions(t, other.URL+"/"))
	for _, kind := range []string{"SharedMem", "redisindex"} {
		t.Run(kind, func(t *testing.T) {
			g := &demosite.Generated{N: 90, DupEvery: 5, IndexPage: true}
			site := httptest.NewServer(g)
			defer site.Close()
			seed := site.URL + "/"
			name := "t-" + kind
			var idx contentseen.Shared = sharedIndex(t)
			if kind == "redisindex" {
				idx = redisIndex(t, srv.Addr(), name)
			}
			a := distWorker(t, srv.Addr(), name, "worker-a", idx, seed)
			b := distWorker(t, srv.Addr(), name, "worker-b", idx, seed)
			dirs := []string{a.opts.DataDir, b.opts.DataDir}
			sums := runWorkers(t, context.Background(), a, b)

			for i := range g.N {
				if h := g.Hits(i); h != 1 {
					t.Errorf("page %d fetched %d times", i, h)
				}
			}
			var stored, dropped int64
			for _, s := range sums {
				stored += s.Run.Stored
				dropped += s.Run.DroppedExact + s.Run.DroppedNear
				t.Logf("worker: stored %d, dropped %d", s.Run.Stored, s.Run.DroppedExact+s.Run.DroppedNear)
			}
			if stored != single.Run.Stored || dropped != single.Run.DroppedExact+single.Run.DroppedNear {
				t.Errorf("two workers stored %d and dropped %d, one process %d and %d",
					stored, dropped, single.Run.Stored, single.Run.DroppedExact+single.Run.DroppedNear)
			}
			checkDistributedResult(t, g, site.URL, dirs, map[string]string{"worker-a": dirs[0], "worker-b": dirs[1]})
		})
	}
}

// redisIndex opens the shared index of crawl name on the redis at addr.
func redisIndex(t *testing.T, addr, name string) contentseen.Shared {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { rdb.Close() })
	idx, err := redisindex.Open(context.Background(), rdb, redisindex.Options{Name: name, SharedOptions: contentseen.SharedOptions{K: 6}})
	if err != nil {
		t.Fatalf("redisindex.Open: %v", err)
	}
	t.Cleanup(func() { idx.Close() })
	return idx
}

// checkDistributedResult checks the union of the workers' data directories:
// of each pair of copies exactly one page stored and one dropped, naming
// the stored one (in the right worker's directory), every other page
// stored once, no two stored pages that the judge would call copies, and
// every directory consistent.
func checkDistributedResult(t *testing.T, g *demosite.Generated, base string, dirs []string, workers map[string]string) {
	t.Helper()
	storedIn := map[string]string{} // path -> data dir
	var pages []*storage.Page
	dropped := map[string]bool{}
	for _, dir := range dirs {
		r := readResult(t, dir, base)
		for path, p := range r.stored {
			if other, dup := storedIn[path]; dup {
				t.Errorf("%s stored in %s and %s", path, other, dir)
			}
			storedIn[path] = dir
			pages = append(pages, p)
		}
		for path, d := range r.dropped {
			if dropped[path] {
				t.Errorf("%s dropped twice", path)
			}
			dropped[path] = true
			origDir, origURL := dir, d.DuplicateOfURL
			if d.DuplicateOfWorker != "" {
				origDir = workers[d.DuplicateOfWorker]
			} else {
				origURL = urlOfID(r, d.DuplicateOf)
			}
			if p := readResult(t, origDir, base).stored[strings.TrimPrefix(origURL, base)]; p == nil || p.ID != d.DuplicateOf {
				t.Errorf("%s dropped as a copy of page %d (%s) of %q, which %s does not hold", path, d.DuplicateOf, origURL, d.DuplicateOfWorker, origDir)
			}
		}
		if len(r.log) != len(r.dropped) {
			t.Errorf("%s: %d drop-log lines, %d drops", dir, len(r.log), len(r.dropped))
		}
		rep, err := CheckData(context.Background(), dir, "", time.Second)
		if err != nil || rep.Err() != nil {
			t.Errorf("check %s: %v %v", dir, err, rep.Err())
		}
	}
	for i := range g.N {
		path := "/p/" + strconv.Itoa(i)
		_, s := storedIn[path]
		switch {
		case g.IsDuplicate(i):
			prev := "/p/" + strconv.Itoa(i-1)
			_, ps := storedIn[prev]
			if s == ps || dropped[path] == dropped[prev] {
				t.Errorf("copies %s and %s: stored %v %v, dropped %v %v", prev, path, ps, s, dropped[prev], dropped[path])
			}
		case !g.IsDuplicate(i+1) && (!s || dropped[path]):
			t.Errorf("%s: stored %v, dropped %v; want stored", path, s, dropped[path])
		}
	}
	checkNoStoredCopies(t, pages, 3)
}

// checkNoStoredCopies fails when two of pages are copies in the judge's
// eyes: the same digest, or within k bits with sketches that verify.
func checkNoStoredCopies(t *testing.T, pages []*storage.Page, k int) {
	t.Helper()
	fper, err := contentseen.NewFingerprinter(contentseen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	th := contentseen.DefaultThresholds()
	sks := make([]contentseen.Sketch, len(pages))
	for i, p := range pages {
		sks[i] = fper.Sketch(contentseen.StripTitle(p.Text, p.Title))
	}
	for i, p := range pages {
		for j := i + 1; j < len(pages); j++ {
			q := pages[j]
			if p.Thin || q.Thin {
				continue
			}
			same := p.Digest == q.Digest
			near := contentseen.Distance(contentseen.Fingerprint(p.Fingerprint), contentseen.Fingerprint(q.Fingerprint)) <= k &&
				th.Verify(contentseen.Compare(sks[i], sks[j]))
			if same || near {
				t.Errorf("stored pages %s and %s are copies", p.URL, q.URL)
			}
		}
	}
}

// urlOfID returns the URL of stored page id of r.
func urlOfID(r crawlResult, id uint64) string {
	for _, p := range r.stored {
		if p.ID == id {
			return p.URL
		}
	}
	return fmt.Sprintf("(no page %d)", id)
}

// tWriter writes log lines to t.Log.
type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// A page stored with a claim the shared index no longer knows (its Redis
// lost the claim, or the lease ran out before a crash's restart) is judged
// and claimed again by the next Run, and stays stored: a copy fetched
// later is dropped as its duplicate.
func TestDistributedReclaimsLostClaims(t *testing.T) {
	srv := redistest.Start(t)
	g := &demosite.Generated{N: 8, IndexPage: true}
	site := httptest.NewServer(g)
	defer site.Close()
	c := distWorker(t, srv.Addr(), "t-reclaim", "worker-a", sharedIndex(t), site.URL+"/")
	dir := c.opts.DataDir
	runWorkers(t, context.Background(), c)

	// Every claim was confirmed twice or is recorded: forge the state a
	// crash after the commit leaves, a claim recorded but gone from the
	// index (a fresh one).
	d, err := OpenData(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	p, err := d.Store.ByURL(context.Background(), site.URL+"/p/3")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	fresh := sharedIndex(t)
	opts := c.opts
	opts.Seeds = nil
	opts.Distributed = &Distributed{Queue: c.opts.Distributed.Queue, Index: fresh, Worker: "worker-a"}
	again, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := again.db.Update(func(tx *bolt.Tx) error { return putClaimTx(tx, p.ID, 12345) }); err != nil {
		t.Fatal(err)
	}
	runWorkers(t, context.Background(), again)
	es, _, err := fresh.Lookup(context.Background(), contentseen.Fingerprint(p.Fingerprint), p.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].URL != p.URL || es[0].ID != "worker-a/"+strconv.FormatUint(p.ID, 10) || es[0].Pending {
		t.Fatalf("after the run the index holds %+v for %s (page %d), want it committed", es, p.URL, p.ID)
	}
}

// A Redis that lost the crawl's keys (back without its data) stops the
// worker with an error naming the loss, rather than crawling on with an
// empty index that would store copies of stored pages again.
func TestDistributedStopsWhenRedisLostTheCrawl(t *testing.T) {
	srv := redistest.Start(t)
	g := &demosite.Generated{N: 300, DupEvery: 5, IndexPage: true, Latency: 20 * time.Millisecond}
	site := httptest.NewServer(g)
	defer site.Close()
	c := distWorker(t, srv.Addr(), "t-lost", "worker-a", redisIndex(t, srv.Addr(), "t-lost"), site.URL+"/")
	done := make(chan error, 1)
	go func() {
		_, err := c.Run(context.Background())
		done <- err
	}()
	for g.Served() < 20 {
		time.Sleep(10 * time.Millisecond)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	if err := rdb.FlushAll(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	err := <-done
	if cerr := c.Close(); cerr != nil {
		t.Error(cerr)
	}
	if !errors.Is(err, redisindex.ErrLost) && !errors.Is(err, redisfrontier.ErrLost) {
		t.Fatalf("Run after the crawl's keys were lost: %v, want ErrLost", err)
	}
	if int(g.Served()) >= g.N {
		t.Errorf("the whole site was crawled after the loss")
	}
}

// A worker keeps the URLs it failed and skipped, with their reasons, in
// its own data directory, where crawl stats and crawl failed read them as
// they do for a single-process crawl.
func TestDistributedRecordsFailedAndSkipped(t *testing.T) {
	srv := redistest.Start(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `<html><body><p>The index page of a small site, with enough words to be a page of its own.</p>
<a href="/missing">gone</a> <a href="/private">private</a></body></html>`)
	})
	mux.HandleFunc("/private", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<html><head><meta name="robots" content="noindex"></head><body><p>Not for the index.</p></body></html>`)
	})
	site := httptest.NewServer(mux)
	defer site.Close()
	c := distWorker(t, srv.Addr(), "t-failed", "worker-a", redisIndex(t, srv.Addr(), "t-failed"), site.URL+"/")
	dir := c.opts.DataDir
	runWorkers(t, context.Background(), c)

	d, err := OpenData(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var failed, skipped []string
	if err := d.Failed(func(u, reason string) error {
		failed = append(failed, strings.TrimPrefix(u, site.URL)+" "+reason)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := d.Skipped(func(u, reason string) error {
		skipped = append(skipped, strings.TrimPrefix(u, site.URL)+" "+reason)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(failed) != 1 || !strings.HasPrefix(failed[0], "/missing ") || !strings.Contains(failed[0], "404") {
		t.Errorf("failed URLs in the worker's directory: %q, want /missing with its 404", failed)
	}
	if len(skipped) != 1 || skipped[0] != "/private noindex" {
		t.Errorf("skipped URLs in the worker's directory: %q, want [/private noindex]", skipped)
	}
	fs, err := d.FrontierStats()
	if err != nil {
		t.Fatal(err)
	}
	if fs.Failed != 1 {
		t.Errorf("FrontierStats().Failed = %d, want 1", fs.Failed)
	}
}

// crawl --retry-failed on a worker queues the URLs its data directory
// recorded as failed again through the shared frontier: a page that
// answered 404 and is back is stored, and no longer listed as failed.
func TestDistributedRetriesFailed(t *testing.T) {
	srv := redistest.Start(t)
	var back atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/":
			fmt.Fprint(w, `<html><body><p>The index page of a small site, with enough words to be a page of its own.</p><a href="/later">later</a></body></html>`)
		case r.URL.Path == "/later" && back.Load():
			fmt.Fprint(w, `<html><body><p>A page that was missing for a while and came back with other words in it.</p></body></html>`)
		default:
			http.NotFound(w, r)
		}
	})
	site := httptest.NewServer(mux)
	defer site.Close()
	dir := t.TempDir()
	idx := redisIndex(t, srv.Addr(), "t-retry")
	c := distWorkerWith(t, srv.Addr(), "t-retry", "worker-a", idx, func(o *Options) { o.DataDir = dir }, site.URL+"/")
	runWorkers(t, context.Background(), c)

	back.Store(true)
	c = distWorkerWith(t, srv.Addr(), "t-retry", "worker-a", idx, func(o *Options) { o.DataDir, o.RetryFailed = dir, true }, site.URL+"/")
	sums := runWorkers(t, context.Background(), c)
	if sums[0].RetriedFailed != 1 || sums[0].Run.Stored != 1 || sums[0].Failed != 0 {
		t.Errorf("rerun with RetryFailed: retried %d, stored %d, failed %d; want 1, 1, 0", sums[0].RetriedFailed, sums[0].Run.Stored, sums[0].Failed)
	}
	d, err := OpenData(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var failed []string
	if err := d.Failed(func(u, _ string) error { failed = append(failed, u); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(failed) != 0 {
		t.Errorf("failed URLs in the worker's directory after the retry: %q, want none", failed)
	}
}
