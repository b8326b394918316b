package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/internal/demosite"
	"github.com/simcrawl/simcrawl/internal/redistest"
)

// A malformed backend URL is a usage error (exit 2) naming it, from the
// flag or from the config; a Redis nobody answers at is exit 1 naming the
// address.
func TestBackendBadURLAndUnreachable(t *testing.T) {
	t.Parallel() // waits out the dial retries to addresses nothing listens on
	dir := t.TempDir()
	seeds := writeFile(t, dir, "seeds.txt", "http://127.0.0.1:1/\n")
	for _, args := range [][]string{
		{"--seeds", seeds, "--backend", "http://localhost:6379/0"},
		{"--seeds", seeds, "--backend", "redis://:6379/0"},
		{"--seeds", seeds, "--set", "backend=redis://localhost:6379/zero"},
		{"--backend", "localhost:6379"},
	} {
		args = append(args, "--data", filepath.Join(dir, "data"))
		_, _, err := run(t, "", args...)
		var rep bytes.Buffer
		if status := report(&rep, err); status != exitUsage || !strings.Contains(rep.String(), "backend") {
			t.Errorf("%q: exit %d, printed %q; want exit 2 naming the backend", args, status, rep.String())
		}
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	_, _, err = run(t, "", "--seeds", seeds, "--backend", "redis://"+addr+"/0", "--data", filepath.Join(dir, "data"))
	var rep bytes.Buffer
	if status := report(&rep, err); status != exitError || !strings.Contains(rep.String(), "cannot reach redis at "+addr) {
		t.Errorf("unreachable redis: exit %d, printed %q; want exit 1 naming %s", status, rep.String(), addr)
	}
}

// A worker whose crawl-wide settings differ from those the crawl was
// started with is refused, naming each; another crawl name on the same
// Redis is another crawl; a worker joining a crawl that does not exist is
// told to start it with seeds.
func TestBackendRefusesOtherSettings(t *testing.T) {
	srv := redistest.Start(t)
	site := httptest.NewServer(&demosite.Generated{N: 10, IndexPage: true})
	defer site.Close()
	dir := t.TempDir()
	seeds := writeFile(t, dir, "seeds.txt", site.URL+"/\n")
	backend := srv.URL(0)
	base := []string{"--backend", backend, "--set", "fetch.delay=0s", "--set", "log.level=warn"}

	_, _, err := run(t, "", append(base, "--data", filepath.Join(dir, "join-first"))...)
	if err == nil || !strings.Contains(err.Error(), `holds no crawl "default"`) {
		t.Errorf("joining a crawl nobody started: %v", err)
	}
	if _, _, err := run(t, "", append(base, "--seeds", seeds, "--data", filepath.Join(dir, "a"))...); err != nil {
		t.Fatalf("first worker: %v", err)
	}
	_, _, err = run(t, "", append(base, "--data", filepath.Join(dir, "b"), "--set", "contentseen.k=5", "--set", "fetch.per_host=3")...)
	for _, want := range []string{`crawl "default" at ` + srv.Addr() + ` was started with other settings`,
		`contentseen.k is "7" there, "5" here`, `fetch.per_host is "2" there, "3" here`, "crawl_name"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("worker with other settings: %v; want %q", err, want)
		}
	}
	var rep bytes.Buffer
	if status := report(&rep, err); status != exitError {
		t.Errorf("worker with other settings: exit %d, want 1", status)
	}
	// The same settings join (and find the crawl done); another name is
	// another crawl, with its own keys.
	if _, _, err := run(t, "", append(base, "--data", filepath.Join(dir, "b"))...); err != nil {
		t.Errorf("worker with the same settings: %v", err)
	}
	out, _, err := run(t, "", append(base, "--seeds", seeds, "--data", filepath.Join(dir, "c"), "--set", "crawl_name=other", "--set", "contentseen.k=5")...)
	if err != nil || !strings.Contains(out, "11 pages") {
		t.Errorf("another crawl name: %v\n%s", err, out)
	}
}

func TestBackendConfigErrorsNamed(t *testing.T) {
	cfg := defaultConfig()
	cfg.Backend = "redis//x"
	cfg.CrawlName = "a b"
	err := cfg.Validate()
	for _, want := range []string{"config: backend:", "config: crawl_name:"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v; want %q", err, want)
		}
	}
	if !errors.Is(err, errBadBackend) {
		t.Errorf("Validate: %v does not wrap errBadBackend", err)
	}
}

// go-redis's own log lines (its pool's "failed to dial after 5 attempts")
// do not reach stderr: the process prints its one error about the
// unreachable Redis, and at log.level=debug the crawl's logger has them.
func TestBackendUnreachableNoRedisLogLines(t *testing.T) {
	t.Parallel() // waits on leases, restarts and dial retries, not the CPU
	dir := t.TempDir()
	seeds := writeFile(t, dir, "seeds.txt", "http://127.0.0.1:1/\n")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	for _, level := range []string{"info", "debug"} {
		cmd, stderr := startCrawlProcess(t, "--seeds", seeds, "--backend", "redis://"+addr+"/0",
			"--data", filepath.Join(dir, "data"), "--set", "log.level="+level)
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitError {
			t.Fatalf("log.level=%s: exit %v, want 1; stderr:\n%s", level, err, stderr)
		}
		out := stderr.String()
		if strings.Contains(out, "pool.go") || !strings.Contains(out, "crawl: backend: cannot reach redis at "+addr) {
			t.Errorf("log.level=%s: stderr:\n%s\nwant only the error about %s, no go-redis log line", level, out, addr)
		}
		if dial := strings.Contains(out, "level=DEBUG msg=\"redis: connection pool: failed to dial"); dial != (level == "debug") {
			t.Errorf("log.level=%s: stderr:\n%s\nwant go-redis's lines in the crawl's log at debug level only", level, out)
		}
	}
}

// scope.max_pages is the crawl's page budget, not a setting every worker
// must share: a crawl stopped at it continues when a worker is started
// with a higher limit.
func TestBackendRaisesMaxPages(t *testing.T) {
	srv := redistest.Start(t)
	site := httptest.NewServer(&demosite.Generated{N: 10, IndexPage: true})
	defer site.Close()
	dir := t.TempDir()
	seeds := writeFile(t, dir, "seeds.txt", site.URL+"/\n")
	base := []string{"--backend", srv.URL(0), "--seeds", seeds, "--data", filepath.Join(dir, "a"), "--set", "fetch.delay=0s", "--set", "log.level=warn"}
	out, _, err := run(t, "", append(base, "--set", "scope.max_pages=3")...)
	if err != nil || !strings.Contains(out, "Stopped at the page limit (scope.max_pages = 3") {
		t.Fatalf("first run with max_pages 3: %v\n%s", err, out)
	}
	// The URLs still queued are in Redis: stats says where, not 0.
	out, _, err = run(t, "", "stats", "--data", filepath.Join(dir, "a"))
	if want := `Pending  held by the shared frontier of crawl "default" at ` + srv.URL(0); err != nil || !strings.Contains(out, want) {
		t.Errorf("stats after the page limit: %v; want %q in\n%s", err, want, out)
	}
	out, _, err = run(t, "", append(base, "--set", "scope.max_pages=100")...)
	if err != nil || !strings.Contains(out, "All runs of this worker: 11 pages stored") || !strings.Contains(out, "the whole crawl: URLs failed: ") {
		t.Errorf("rerun with max_pages 100: %v\n%s", err, out)
	}
}

// A worker's data directory records its crawl at first use: a worker of
// another crawl started on it is refused, naming both, before anything is
// crawled.
func TestBackendRefusesAnotherCrawlsDirectory(t *testing.T) {
	srv := redistest.Start(t)
	site := httptest.NewServer(&demosite.Generated{N: 10, IndexPage: true})
	defer site.Close()
	dir := t.TempDir()
	seeds := writeFile(t, dir, "seeds.txt", site.URL+"/\n")
	base := []string{"--backend", srv.URL(0), "--seeds", seeds, "--data", filepath.Join(dir, "a"), "--set", "fetch.delay=0s", "--set", "log.level=warn"}
	if _, _, err := run(t, "", append(base, "--set", "crawl_name=down")...); err != nil {
		t.Fatalf("first crawl: %v", err)
	}
	out, _, err := run(t, "", append(base, "--set", "crawl_name=maxp")...)
	if err == nil || !strings.Contains(err.Error(), `belongs to crawl "down"`) || !strings.Contains(err.Error(), `not "maxp"`) {
		t.Errorf("a directory of crawl down in crawl maxp: %v\n%s", err, out)
	}
	if _, _, err := run(t, "", append(base, "--set", "crawl_name=down")...); err != nil {
		t.Errorf("the same crawl again: %v", err)
	}
}

// A worker that cannot reach Redis leaves no data directory it created.
func TestBackendFailedStartLeavesNoDirectory(t *testing.T) {
	t.Parallel() // waits out the dial retries to an address nothing listens on
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	dir := t.TempDir()
	seeds := writeFile(t, dir, "seeds.txt", "http://127.0.0.1:1/\n")
	data := filepath.Join(dir, "data")
	if _, _, err := run(t, "", "--seeds", seeds, "--backend", "redis://"+addr+"/0", "--data", data); err == nil {
		t.Fatal("unreachable redis: no error")
	}
	if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after a failed start the data directory is there (%v)", err)
	}
}

// A Redis that comes back without the crawl's keys stops the worker with
// the loss said once, and a summary that does not claim URLs still
// queued that Redis no longer holds.
func TestBackendLostKeysReportedOnce(t *testing.T) {
	srv := redistest.Start(t)
	g := &demosite.Generated{N: 300, IndexPage: true, Latency: 20 * time.Millisecond}
	site := httptest.NewServer(g)
	defer site.Close()
	dir := t.TempDir()
	seeds := writeFile(t, dir, "seeds.txt", site.URL+"/\n")
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, _, err := run(t, "", "--backend", srv.URL(0), "--seeds", seeds, "--data", filepath.Join(dir, "a"),
			"--set", "fetch.delay=0s", "--set", "log.level=error")
		done <- result{out, err}
	}()
	for g.Served() < 20 {
		time.Sleep(10 * time.Millisecond)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	if err := rdb.FlushAll(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	r := <-done
	var rep bytes.Buffer
	report(&rep, r.err)
	if n := strings.Count(rep.String(), "are gone from redis"); n != 1 {
		t.Errorf("the loss is said %d times, want once:\n%s", n, rep.String())
	}
	if regexp.MustCompile(`still queued: [1-9]`).MatchString(r.out) {
		t.Errorf("the summary claims URLs still queued after the crawl's keys are gone:\n%s", r.out)
	}
}

// crawl dedup judges against a directory's own index only: a backend in
// the config is a usage error (exit 2) and a worker's directory is
// refused (exit 1), naming its crawl, rather than storing copies of pages
// other workers hold.
func TestDedupRefusesBackend(t *testing.T) {
	dir := t.TempDir()
	input := writeFile(t, dir, "pages.jsonl", `{"url":"https://example.test/a","text":"some words of a page"}`+"\n")
	cfg := writeFile(t, dir, "config.yaml", "backend: redis://user:secret@127.0.0.1:1/0\n")
	_, _, err := run(t, "", "dedup", "--config", cfg, "--data", filepath.Join(dir, "d"), "--input", input)
	var errb strings.Builder
	if code := report(&errb, err); code != exitUsage || !strings.Contains(errb.String(), "own index, not a shared crawl's") || strings.Contains(errb.String(), "secret") {
		t.Errorf("dedup with a backend in the config: exit %d, want %d; stderr:\n%s", code, exitUsage, errb.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "d")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused dedup left its data directory: %v", err)
	}
	worker := filepath.Join(dir, "w")
	if err := os.MkdirAll(worker, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := crawler.RecordDirCrawl(worker, "news", "redis://127.0.0.1:1/0"); err != nil {
		t.Fatal(err)
	}
	_, _, err = run(t, "", "dedup", "--data", worker, "--input", input)
	if err == nil || !strings.Contains(err.Error(), `is a worker of crawl "news"`) {
		t.Errorf("dedup into a worker's directory: %v, want it refused", err)
	}
}
