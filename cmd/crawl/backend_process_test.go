package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/internal/demosite"
	"github.com/simcrawl/simcrawl/internal/redistest"
	"github.com/simcrawl/simcrawl/storage"
)

// workerArgs are a distributed crawl worker's arguments: short leases so
// that a dead worker's URLs come back within the test.
func workerArgs(backend, data string, more ...string) []string {
	return append([]string{"--backend", backend, "--data", data, "--set", "fetch.delay=0s",
		"--set", "fetch.parallelism=4", "--set", "fetch.per_host=12", "--set", "log.level=warn",
		"--set", "backend_lease=5s"}, more...)
}

// byAgent counts the requests of each User-Agent.
type byAgent struct {
	h  http.Handler
	mu sync.Mutex
	n  map[string]int
}

func (b *byAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	b.n[r.UserAgent()]++
	b.mu.Unlock()
	b.h.ServeHTTP(w, r)
}

// wait waits until agent made n requests (bounded).
func (b *byAgent) wait(t *testing.T, agent string, n int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		b.mu.Lock()
		got := b.n[agent]
		b.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s made %d requests, waited for %d", agent, got, n)
		}
	}
}

// distSite serves a generated site with an index page and copies, and
// returns it with a seeds file naming the index. The tests that stop a
// worker or Redis mid-crawl use 60-120 pages at 200 ms each: a crawl as
// long as 100-240 pages at 100 ms (the workers start and are caught
// mid-crawl as before), for half the CPU (a page costs a worker about
// 15 ms under -race).
func distSite(t *testing.T, n int, latency time.Duration) (*demosite.Generated, *byAgent, string, string) {
	t.Helper()
	g := &demosite.Generated{N: n, DupEvery: 4, Latency: latency, IndexPage: true}
	agents := &byAgent{h: g, n: map[string]int{}}
	srv := httptest.NewServer(agents)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	return g, agents, writeFile(t, dir, "seeds.txt", srv.URL+"/\n"), dir
}

func waitExit(t *testing.T, name string, cmd *exec.Cmd, stderr interface{ String() string }) {
	t.Helper()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("worker %s: %v; stderr:\n%s", name, err, stderr.String())
	}
}

// Three worker processes crawl one site; one is killed with kill -9
// mid-crawl and started again on its data directory. Every page is
// decided once across the workers (none lost, none stored twice), of each
// pair of copies one is stored, and no page is fetched more than twice.
func TestBackendWorkersKillNine(t *testing.T) {
	t.Parallel() // waits on leases, restarts and dial retries, not the CPU
	if testing.Short() {
		t.Skip("starts crawl processes")
	}
	srv := redistest.Start(t)
	g, agents, seeds, dir := distSite(t, 120, 200*time.Millisecond)
	be := srv.URL(0)
	dirs := []string{filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c")}
	a, aerr := startCrawlProcess(t, workerArgs(be, dirs[0], "--seeds", seeds)...)
	waitServed(t, g, 5) // the seeds are queued
	b, berr := startCrawlProcess(t, workerArgs(be, dirs[1], "--set", "fetch.user_agent=worker-b")...)
	c, cerr := startCrawlProcess(t, workerArgs(be, dirs[2])...)
	agents.wait(t, "worker-b", 4) // b is crawling
	if err := b.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := b.Wait(); !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("worker b was not running when killed: %v; stderr:\n%s", err, berr)
	}
	b2, b2err := startCrawlProcess(t, workerArgs(be, dirs[1])...)
	waitExit(t, "a", a, aerr)
	waitExit(t, "c", c, cerr)
	waitExit(t, "b (restarted)", b2, b2err)
	t.Logf("served %d requests for %d pages", g.Served(), g.N)
	checkWorkers(t, g, dirs, 0, false)
	// The reading commands find every drop's page among the workers'.
	out, stderr, err := run(t, "", "dups", "--data", dirs[0], "--data", dirs[1], "--data", dirs[2])
	if err != nil || strings.Contains(out+stderr, "none of the data directories") {
		t.Errorf("dups over the workers' directories: %v\n%s\n%s", err, stderr, out)
	}
}

// A worker killed with kill -9 and not restarted: its leased URLs go
// back to the queue when its lease ends and the others crawl them. A page
// it stored but had not confirmed may be stored again by another worker
// (a copy beside it, never a copy dropped for nothing): at most the pages
// it had in flight.
func TestBackendWorkerKilledForGood(t *testing.T) {
	t.Parallel() // waits on leases, restarts and dial retries, not the CPU
	if testing.Short() {
		t.Skip("starts crawl processes")
	}
	srv := redistest.Start(t)
	g, agents, seeds, dir := distSite(t, 120, 200*time.Millisecond)
	be := srv.URL(0)
	dirs := []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}
	a, aerr := startCrawlProcess(t, workerArgs(be, dirs[0], "--seeds", seeds, "--set", "backend_lease=2s")...)
	waitServed(t, g, 5)
	b, berr := startCrawlProcess(t, workerArgs(be, dirs[1], "--set", "fetch.user_agent=worker-b", "--set", "backend_lease=2s")...)
	agents.wait(t, "worker-b", 20) // b has stored pages
	if err := b.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := b.Wait(); !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("worker b was not running when killed: %v; stderr:\n%s", err, berr)
	}
	waitExit(t, "a", a, aerr)
	checkWorkers(t, g, dirs, 4, false) // b's parallelism
}

// Redis is killed and restarted from its append-only file mid-crawl: the
// workers wait, reconnect and finish the crawl, every page decided.
func TestBackendRedisRestart(t *testing.T) {
	t.Parallel() // waits on leases, restarts and dial retries, not the CPU
	if testing.Short() {
		t.Skip("starts crawl processes")
	}
	srv := redistest.Start(t)
	g, agents, seeds, dir := distSite(t, 100, 200*time.Millisecond)
	be := srv.URL(0)
	dirs := []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}
	// The shortest settle window: this restart loses no writes, the window
	// only delays the claims after it (TestBackendRedisLostWrites keeps the
	// default, which a replay under -race on a loaded machine needs).
	settle := []string{"--set", "backend_settle=3s"}
	a, aerr := startCrawlProcess(t, workerArgs(be, dirs[0], append(settle, "--seeds", seeds)...)...)
	waitServed(t, g, 5)
	b, berr := startCrawlProcess(t, workerArgs(be, dirs[1], append(settle, "--set", "fetch.user_agent=worker-b")...)...)
	agents.wait(t, "worker-b", 4) // both are crawling
	srv.Kill()
	time.Sleep(500 * time.Millisecond) // the workers see it gone
	srv.Restart()
	waitExit(t, "a", a, aerr)
	waitExit(t, "b", b, berr)
	// A second of lost writes may have lost a claim or a confirm: a page
	// claimed in it may be stored beside a copy (see the README).
	checkWorkers(t, g, dirs, 4, false)
}

// Redis comes back without its last writes, as after an OS crash under
// appendfsync everysec: the append-only file is cut back to a moment T
// while two workers crawl (appendfsync always makes T exact), and the
// claims, confirms and frontier writes of the 30 pages fetched after T
// are lost. The workers notice the restart, write their recent claims
// again before any new claim (the settle window), and finish: some URLs
// fetched twice, no page decided twice, of each pair of copies exactly one
// stored.
func TestBackendRedisLostWrites(t *testing.T) {
	t.Parallel() // waits on the settle window and dial retries, not the CPU
	if testing.Short() {
		t.Skip("starts crawl processes")
	}
	srv := redistest.Start(t, redistest.WithArgs("--appendfsync", "always"))
	g, agents, seeds, dir := distSite(t, 200, 100*time.Millisecond)
	be := srv.URL(0)
	dirs := []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}
	a, aerr := startCrawlProcess(t, workerArgs(be, dirs[0], "--seeds", seeds, "--set", "log.level=info")...)
	waitServed(t, g, 5)
	b, berr := startCrawlProcess(t, workerArgs(be, dirs[1], "--set", "fetch.user_agent=worker-b", "--set", "log.level=info")...)
	agents.wait(t, "worker-b", 4) // both are crawling
	aofs, err := filepath.Glob(filepath.Join(srv.Dir(), "appendonlydir", "*.incr.aof"))
	if err != nil || len(aofs) != 1 {
		t.Fatalf("incremental AOF in %s: %v, %v", srv.Dir(), aofs, err)
	}
	fi, err := os.Stat(aofs[0])
	if err != nil {
		t.Fatal(err)
	}
	waitServed(t, g, g.Served()+30) // T, then 30 pages
	srv.Kill()
	if err := os.Truncate(aofs[0], fi.Size()); err != nil {
		t.Fatal(err)
	}
	srv.Restart()
	waitExit(t, "a", a, aerr)
	waitExit(t, "b", b, berr)
	// No page decided twice, of each pair of copies exactly one stored.
	// (A look-up cut in two by the restart once stored /p/35 and /p/36,
	// both by one worker: TestHealLookupCutByRestart.)
	checkWorkers(t, g, dirs, 0, true)
	// The lost claims were written again, in time, by the workers.
	logs := aerr.String() + berr.String()
	replayed := 0
	for _, m := range regexp.MustCompile(`wrote its recent claims again before any new claim.* replayed=(\d+)`).FindAllStringSubmatch(logs, -1) {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			t.Fatal(err)
		}
		replayed += n
	}
	t.Logf("the workers replayed %d claims", replayed)
	if replayed == 0 || strings.Contains(logs, "both stay stored") || strings.Contains(logs, "late=") {
		t.Errorf("the workers' logs do not say they replayed claims in time")
	}
	if t.Failed() {
		t.Logf("the workers' logs:\n%s", logs)
	}
}

// checkWorkers checks the workers' data directories after a crawl of g:
// each directory consistent (crawl check), every page decided, a drop
// naming a page its worker holds, no page fetched more than twice, and at
// most maxTwice pages decided twice or pairs of copies stored (0: of each
// pair of copies exactly one stored). With dropsTwice, a copy dropped by
// two workers (fetched again after Redis lost its finish) is allowed and
// not counted.
func checkWorkers(t *testing.T, g *demosite.Generated, dirs []string, maxTwice int, dropsTwice bool) {
	t.Helper()
	ctx := context.Background()
	byWorker := map[string]*crawler.Data{}
	var datas []*crawler.Data
	for _, dir := range dirs {
		rep, err := crawler.CheckData(ctx, dir, "", time.Second)
		if err != nil || rep.Err() != nil {
			t.Errorf("check %s: %v %v", dir, err, rep.Err())
		}
		name, err := os.ReadFile(filepath.Join(dir, crawler.WorkerFile))
		if err != nil {
			t.Fatal(err)
		}
		d, err := crawler.OpenData(dir, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		byWorker[strings.TrimSpace(string(name))] = d
		datas = append(datas, d)
	}
	stored := map[string]*storage.Page{}
	decided := map[string]int{}
	how := map[string][]string{} // URL -> "stored in DIR" or "dropped in DIR"
	for i, d := range datas {
		if err := d.Store.Pages(ctx, false, func(p *storage.Page) error {
			decided[p.URL]++
			how[p.URL] = append(how[p.URL], "stored in "+filepath.Base(dirs[i]))
			stored[p.URL] = p
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := d.Store.Drops(ctx, func(dr *storage.Drop) error {
			decided[dr.URL]++
			how[dr.URL] = append(how[dr.URL], "dropped in "+filepath.Base(dirs[i]))
			of := d
			if dr.DuplicateOfWorker != "" {
				of = byWorker[dr.DuplicateOfWorker]
			}
			if of == nil {
				t.Errorf("%s: drop of %s names worker %q, not one of the crawl's", dirs[i], dr.URL, dr.DuplicateOfWorker)
				return nil
			}
			if _, err := of.Store.Get(ctx, dr.DuplicateOf); err != nil {
				t.Errorf("%s: drop of %s names page %d of %q: %v", dirs[i], dr.URL, dr.DuplicateOf, dr.DuplicateOfWorker, err)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	base := ""
	for u := range decided {
		if i := strings.Index(u, "/p/"); i > 0 {
			base = u[:i]
			break
		}
	}
	twice, refetched := 0, 0
	for i := range g.N {
		u := base + "/p/" + strconv.Itoa(i)
		switch n := decided[u]; {
		case n == 0:
			t.Errorf("%s never decided", u)
		case n > 1 && dropsTwice && !slices.ContainsFunc(how[u], func(h string) bool { return strings.HasPrefix(h, "stored") }):
			t.Logf("%s decided %d times (allowed): %s", u, n, strings.Join(how[u], ", "))
		case n > 1:
			twice++
			t.Logf("%s decided %d times: %s", u, n, strings.Join(how[u], ", "))
		}
		if h := g.Hits(i); h > 2 {
			t.Errorf("%s fetched %d times", u, h)
		} else if h == 2 {
			refetched++
		}
		if maxTwice == 0 && g.IsDuplicate(i) {
			_, s1 := stored[u]
			_, s0 := stored[base+"/p/"+strconv.Itoa(i-1)]
			if s0 == s1 {
				t.Errorf("copies /p/%d and /p/%d: stored %v and %v, want one", i-1, i, s0, s1)
			}
		}
	}
	var fps []*storage.Page
	for _, p := range stored {
		if !p.Thin {
			fps = append(fps, p)
		}
	}
	copies := 0
	for i, p := range fps {
		for _, q := range fps[i+1:] {
			if contentseen.Distance(contentseen.Fingerprint(p.Fingerprint), contentseen.Fingerprint(q.Fingerprint)) <= 3 {
				copies++
			}
		}
	}
	for i, d := range datas {
		pages, drops, err := d.Store.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d pages, %d drops", filepath.Base(dirs[i]), pages, drops)
		if pages == 0 {
			t.Errorf("%s stored nothing: the worker did not take part", dirs[i])
		}
	}
	t.Logf("%d pages decided, %d fetched twice, %d decided twice, %d pairs of copies stored", len(decided), refetched, twice, copies)
	if twice+copies > maxTwice {
		t.Errorf("%d pages decided twice and %d pairs of copies stored, want at most %d in all", twice, copies, maxTwice)
	}
}

// Ctrl-C: the worker finishes its pages in flight, leaves (no URL stays
// leased to it) and exits 130; a worker joining later finishes the crawl.
func TestBackendInterruptLeaves(t *testing.T) {
	t.Parallel() // waits on leases, restarts and dial retries, not the CPU
	if testing.Short() {
		t.Skip("starts crawl processes")
	}
	srv := redistest.Start(t)
	g, _, seeds, dir := distSite(t, 60, 200*time.Millisecond)
	be := srv.URL(0)
	dirs := []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}
	a, aerr := startCrawlProcess(t, workerArgs(be, dirs[0], "--seeds", seeds, "--set", "backend_lease=10m")...)
	waitServed(t, g, 20)
	if err := a.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := a.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("after Ctrl-C: %v, want exit 130; stderr:\n%s", err, aerr)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	leased, err := rdb.HLen(context.Background(), "simcrawl:{default}:fr:fly").Result()
	if err != nil {
		t.Fatal(err)
	}
	if leased != 0 {
		t.Fatalf("%d URLs still leased after the only worker left", leased)
	}
	// With a 10-minute lease, b finishes only because a gave its URLs back.
	if _, _, err := run(t, "", workerArgs(be, dirs[1], "--set", "backend_lease=10m")...); err != nil {
		t.Fatalf("worker b: %v", err)
	}
	checkWorkers(t, g, dirs, 0, false)
}
