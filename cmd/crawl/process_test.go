package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/internal/demosite"
	"github.com/simcrawl/simcrawl/internal/redistest"
	"github.com/simcrawl/simcrawl/storage"
)

// The test binary doubles as the crawl program: with SIMCRAWL_MAIN_ARGS set
// (a JSON list), TestMain runs main with those arguments instead of the
// tests, so a test can kill a real crawl process.
func TestMain(m *testing.M) {
	if a := os.Getenv("SIMCRAWL_MAIN_ARGS"); a != "" {
		var args []string
		if err := json.Unmarshal([]byte(a), &args); err != nil {
			panic(err)
		}
		os.Args = append([]string{"crawl"}, args...)
		main()
		os.Exit(0)
	}
	// The parallel tests here are the crawl-process tests, which wait on
	// leases, restarts, dial retries and the settle window.
	redistest.WaitingParallel(6)
	os.Exit(m.Run())
}

func startCrawlProcess(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	a, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = childEnv("SIMCRAWL_MAIN_ARGS=" + string(a))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &stderr
}

// childEnv is this process's environment plus extra, for a child process
// of the test binary, with the race detector's pause at exit turned off:
// a binary built with -race sleeps GORACE's atexit_sleep_ms (1 s by
// default) as it exits, to let other threads finish their reports. The
// child still reports every race it finds and exits with status 66 then.
func childEnv(extra ...string) []string {
	env := append([]string(nil), os.Environ()...)
	gorace := "atexit_sleep_ms=0"
	for i, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GORACE="); ok {
			gorace = strings.TrimSpace(v + " " + gorace) // the last setting wins
			env = append(env[:i], env[i+1:]...)
			break
		}
	}
	return append(append(env, "GORACE="+gorace), extra...)
}

// waitServed waits until the site has served n pages (bounded: the test
// fails rather than hangs).
func waitServed(t *testing.T, g *demosite.Generated, n int64) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for g.Served() < n {
		if time.Now().After(deadline) {
			t.Fatalf("site served %d pages, waited for %d", g.Served(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func crawlArgs(seeds, data string) []string {
	return []string{"--seeds", seeds, "--data", data, "--set", "fetch.delay=0s",
		"--set", "fetch.parallelism=4", "--set", "fetch.per_host=4", "--set", "log.level=warn",
		"--set", "scope.max_depth=10"}
}

// checkConsistent checks that store, index, frontier and drop log agree
// after a crawl of g ran to completion, and that no page was fetched more
// than twice (once before a crash, once after).
func checkConsistent(t *testing.T, g *demosite.Generated, data string, maxRefetched int) {
	t.Helper()
	d, err := crawler.OpenData(data, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	seen := map[string]string{}
	type storedFP struct {
		url string
		fp  contentseen.Fingerprint
	}
	var fps []storedFP
	if err := d.Store.Pages(ctx, false, func(p *storage.Page) error {
		if prev, ok := seen[p.URL]; ok {
			t.Errorf("%s stored twice (%s)", p.URL, prev)
		}
		seen[p.URL] = "stored"
		if !p.Thin {
			fps = append(fps, storedFP{p.URL, contentseen.Fingerprint(p.Fingerprint)})
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	drops := 0
	if err := d.Store.Drops(ctx, func(dr *storage.Drop) error {
		drops++
		if prev, ok := seen[dr.URL]; ok {
			t.Errorf("%s dropped but also %s", dr.URL, prev)
		}
		seen[dr.URL] = "dropped"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// ContentSeen's invariant, whatever the order of fetches and the
	// crash: no two stored pages lie within k bits of each other.
	for i, a := range fps {
		for _, b := range fps[i+1:] {
			if dist := contentseen.Distance(a.fp, b.fp); dist <= 3 {
				t.Errorf("stored pages %s and %s are %d bits apart", a.url, b.url, dist)
			}
		}
	}
	if drops == 0 {
		t.Error("no page dropped; the site has near-duplicates")
	}
	log, err := os.ReadFile(filepath.Join(data, "dropped.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(log), "\n"); lines != drops {
		t.Errorf("drop log has %d lines, store has %d drops", lines, drops)
	}
	refetched := 0
	for i := range g.N {
		switch h := g.Hits(i); {
		case h > 2:
			t.Errorf("page %d fetched %d times", i, h)
		case h == 2:
			refetched++
		}
	}
	if refetched > maxRefetched {
		t.Errorf("%d pages fetched twice, want at most %d (the pages in flight)", refetched, maxRefetched)
	}
	if len(seen) < 50 {
		t.Errorf("only %d pages decided; the site has %d", len(seen), g.N)
	}
}

// generatedSite serves a 100-page generated site with near-duplicates and
// returns it with a seeds file and a data directory path for crawling it.
// The tests that stop its crawl mid-way serve a page in 40 ms: as long a
// crawl as 200 pages at 20 ms, for half the pages' CPU.
func generatedSite(t *testing.T, latency time.Duration) (g *demosite.Generated, seeds, data string) {
	t.Helper()
	g = &demosite.Generated{N: 100, DupEvery: 7, Latency: latency}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	return g, writeFile(t, dir, "seeds.txt", srv.URL+"/p/0\n"), filepath.Join(dir, "data")
}

func TestKillNineThenResume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts crawl processes")
	}
	g, seeds, data := generatedSite(t, 40*time.Millisecond)
	cmd, _ := startCrawlProcess(t, crawlArgs(seeds, data)...)
	waitServed(t, g, 40)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Fatal("crawl process killed with -9 exited cleanly")
	}
	if _, _, err := run(t, "", crawlArgs(seeds, data)...); err != nil {
		t.Fatalf("resumed crawl: %v", err)
	}
	checkConsistent(t, g, data, 4)
}

func TestInterruptDrainsAndExits130(t *testing.T) {
	if testing.Short() {
		t.Skip("starts crawl processes")
	}
	g, seeds, data := generatedSite(t, 40*time.Millisecond)
	cmd, stderr := startCrawlProcess(t, crawlArgs(seeds, data)...)
	waitServed(t, g, 30)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("after Ctrl-C: %v, want exit status 130; stderr:\n%s", err, stderr)
	}
	if !strings.Contains(stderr.String(), "interrupted") || !strings.Contains(stderr.String(), "stopping: requests in flight finish") {
		t.Errorf("stderr does not say the crawl is stopping, then that it was interrupted:\n%s", stderr)
	}
	if _, _, err := run(t, "", crawlArgs(seeds, data)...); err != nil {
		t.Fatalf("resumed crawl: %v", err)
	}
	// A drained stop finishes the pages in flight: nothing is fetched twice.
	checkConsistent(t, g, data, 0)
}

func TestSecondProcessRefused(t *testing.T) {
	t.Parallel() // waits out the 1 s lock timeouts; its own site and directories
	if testing.Short() {
		t.Skip("starts crawl processes")
	}
	g, seeds, data := generatedSite(t, 300*time.Millisecond) // slow enough to outlast the checks below
	cmd, _ := startCrawlProcess(t, crawlArgs(seeds, data)...)
	defer func() {
		if err := cmd.Process.Kill(); err != nil {
			t.Errorf("kill: %v", err)
		}
		if err := cmd.Wait(); err == nil {
			t.Error("killed crawl process exited cleanly")
		}
	}()
	waitServed(t, g, 3)
	// A second crawl is refused, and the read-only commands fail too,
	// rather than read a file being written. Each waits out the lock's
	// timeout (1 s) before it gives up: they run at once, as they would
	// from several shells.
	attempts := [][]string{crawlArgs(seeds, data)}
	for _, args := range [][]string{{"export"}, {"dups"}, {"dups", "show", "http://x.example/"}, {"stats"}, {"failed"}} {
		attempts = append(attempts, append(args, "--data", data))
	}
	var wg sync.WaitGroup
	for _, args := range attempts {
		wg.Go(func() {
			_, _, err := run(t, "", args...)
			if err == nil || !strings.Contains(err.Error(), "another crawl") {
				t.Errorf("crawl %s during a crawl: err = %v, want 'another crawl' holds it", strings.Join(args, " "), err)
			}
		})
	}
	wg.Wait()
	if g.Served() >= int64(g.N) {
		t.Errorf("the first crawl fetched all %d pages before the checks ended: they did not run during a crawl", g.N)
	}
}

// Ctrl-C is the only way `crawl serve` ends, and it exits 130 as every
// interrupted command does, saying the web view stopped.
func TestServeInterruptedExits130(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a crawl process")
	}
	site := httptest.NewServer(demosite.New())
	defer site.Close()
	dir := t.TempDir()
	seeds := writeFile(t, dir, "seeds.txt", site.URL+"/\n")
	data := filepath.Join(dir, "data")
	if _, _, err := run(t, "", "--seeds", seeds, "--data", data, "--set", "fetch.delay=0s",
		"--set", "scope.max_pages=3", "--set", "log.level=warn"); err != nil {
		t.Fatalf("crawl: %v", err)
	}
	a, err := json.Marshal([]string{"serve", "--data", data, "--addr", "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "SIMCRAWL_MAIN_ARGS="+string(a))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "Serving the crawl") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("crawl serve printed %q (%v), want its address; stderr:\n%s", line, err, stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitInterrupt {
		t.Fatalf("serve after Ctrl-C: %v, want exit status 130; stderr:\n%s", err, stderr.String())
	}
	// The first Ctrl-C's message, then the outcome: main waits for the
	// one before it prints the other.
	if want := "crawl: stopping the web view; Ctrl-C again to abort\ncrawl: web view stopped\n"; !strings.HasSuffix(stderr.String(), want) {
		t.Errorf("serve after Ctrl-C: stderr:\n%s\nwant it to end with %q", stderr.String(), want)
	}
}
