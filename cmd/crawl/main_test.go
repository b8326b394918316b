package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/simcrawl/simcrawl/internal/demosite"
)

// run runs the program with args and returns its stdout, stderr and error.
func run(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	m := &Main{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb}
	err := m.Run(context.Background(), args)
	return out.String(), errb.String(), err
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCrawlCommandEndToEnd(t *testing.T) {
	srv := httptest.NewServer(demosite.New())
	defer srv.Close()
	dir := t.TempDir()
	seeds := writeFile(t, dir, "seeds.txt", "# the demo site\n\n"+srv.URL+"/\n")
	data := filepath.Join(dir, "data")

	out, _, err := run(t, "", "--seeds", seeds, "--data", data,
		"--set", "fetch.delay=0s", "--set", "fetch.parallelism=1", "--set", "log.level=warn")
	if err != nil {
		t.Fatalf("crawl: %v", err)
	}
	for _, want := range []string{"pages stored", "dropped as duplicates", "dropped.jsonl"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}

	log, err := os.ReadFile(filepath.Join(data, "dropped.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	if len(lines) != len(demosite.Dropped) {
		t.Fatalf("drop log has %d lines, want %d:\n%s", len(lines), len(demosite.Dropped), log)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatalf("drop log line: %v", err)
	}
	for _, field := range []string{"time", "url", "duplicate_of", "distance", "reason", "fingerprint", "matched_fingerprint", "title", "depth"} {
		if _, ok := rec[field]; !ok {
			t.Errorf("drop log line lacks field %q: %s", field, lines[0])
		}
	}

	exp, _, err := run(t, "", "export", "--data", data)
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	if n := strings.Count(exp, "\n"); n != len(demosite.Stored) {
		t.Errorf("export wrote %d lines, want %d", n, len(demosite.Stored))
	}

	// Rerunning the finished crawl fetches nothing new.
	out, _, err = run(t, "", "--seeds", seeds, "--data", data, "--set", "fetch.delay=0s", "--set", "log.level=warn")
	if err != nil {
		t.Fatalf("second crawl: %v", err)
	}
	if !strings.Contains(out, "decided 0 URLs = stored 0 (0 thin) + dropped 0 exact + 0 near + skipped 0 + errors 0; fetched 0 ") {
		t.Errorf("rerun of a finished crawl fetched pages:\n%s", out)
	}
}

func TestBadSeedsNameFileAndLine(t *testing.T) {
	dir := t.TempDir()
	seeds := writeFile(t, dir, "seeds.txt", "https://example.org/\n# fine\nftp://example.org/x\n\nnot a url\n")
	_, _, err := run(t, "", "--seeds", seeds, "--data", filepath.Join(dir, "data"))
	if err == nil {
		t.Fatal("crawl with bad seeds succeeded")
	}
	for _, want := range []string{seeds + ":3:", seeds + ":5:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if _, statErr := os.Stat(filepath.Join(dir, "data")); statErr == nil {
		t.Error("bad seeds still created the data directory")
	}
}

func TestBadConfigFromCommandLine(t *testing.T) {
	dir := t.TempDir()
	seeds := writeFile(t, dir, "seeds.txt", "https://example.org/\n")
	_, _, err := run(t, "", "--seeds", seeds, "--config", "testdata/config/unknown_key.bad.yaml")
	if err == nil || !strings.Contains(err.Error(), "delai") || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("err = %v, want the unknown key and its line", err)
	}
}

func TestHelp(t *testing.T) {
	out, _, err := run(t, "", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range commands() {
		if !strings.Contains(out, "crawl "+c.name) {
			t.Errorf("--help does not list %s", c.name)
		}
	}
	for _, c := range commands() {
		out, _, err := run(t, "", "help", c.name)
		if err != nil {
			t.Errorf("help %s: %v", c.name, err)
		}
		if !strings.Contains(out, "Usage: crawl "+c.name) {
			t.Errorf("help %s:\n%s", c.name, out)
		}
	}
	if _, _, err := run(t, "", "frobnicate"); err == nil {
		t.Error("unknown command succeeded")
	}
}

func TestFingerprintAndDistance(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.txt", "The cat sat on the mat while the dog slept by the door, and the children read books about ships, stars and faraway islands all afternoon.")
	b := writeFile(t, dir, "b.txt", "The cat sat on a mat while the dog slept by the door, and the children read books about ships, stars and faraway islands all afternoon.")
	out, _, err := run(t, "", "fingerprint", a, b)
	if err != nil {
		t.Fatalf("fingerprint: %v", err)
	}
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2 || len(strings.Fields(lines[0])[0]) != 16 {
		t.Errorf("fingerprint output:\n%s", out)
	}
	out, _, err = run(t, "", "distance", a, b)
	if err != nil {
		t.Fatalf("distance: %v", err)
	}
	if !strings.HasPrefix(out, "distance ") || !strings.Contains(out, "similarity") {
		t.Errorf("distance output: %s", out)
	}
	out, _, err = run(t, "short text", "fingerprint")
	if err != nil {
		t.Fatalf("fingerprint stdin: %v", err)
	}
	if !strings.Contains(out, "not enough content") {
		t.Errorf("thin stdin: %s", out)
	}
	// Flags may follow the files; after "--" a name is a file even when
	// it looks like a flag.
	words, _, err := run(t, "", "distance", "--features", "words", a, b)
	if err != nil {
		t.Fatal(err)
	}
	shingles, _, err := run(t, "", "distance", "--features", "char-shingles:3", a, b)
	if err != nil {
		t.Fatal(err)
	}
	if after, _, err := run(t, "", "distance", a, b, "--features", "char-shingles:3"); err != nil || after != shingles || after == words {
		t.Errorf("distance with the flag after the files: %q, %v; want %q (flag first), not %q (default)", after, err, shingles, words)
	}
	writeFile(t, dir, "--features", "The cat sat on the mat while the dog slept by the door, and the children read books about ships.")
	t.Chdir(dir)
	if out, _, err := run(t, "", "fingerprint", "--", "--features"); err != nil || !strings.HasSuffix(strings.TrimSpace(out), " --features") {
		t.Errorf("fingerprint -- --features: %q, %v; want the file's fingerprint", out, err)
	}
	// A "--" that is a flag's value ends nothing: the flags after it count.
	if _, _, err := run(t, "", "distance", "--features", "--", "a.txt", "b.txt", "--features", "words"); err != nil {
		t.Errorf("distance --features -- a b --features words: %v", err)
	}
	if _, _, err := run(t, "", "distance", a); err == nil || !strings.Contains(err.Error(), "want two files, got 1") {
		t.Errorf("distance with one file: %v", err)
	}
}

func TestExtractJSON(t *testing.T) {
	dir := t.TempDir()
	page := writeFile(t, dir, "p.html", `<html lang="en"><head><title>T</title></head><body><nav><a href="/x">Home</a></nav>
<article><h1>Heading</h1><p>First paragraph of the article, long enough to count as the main text of this small page.</p>
<p>Second paragraph, also part of the article, with a <a href="https://example.org/next">link</a>.</p></article></body></html>`)
	out, _, err := run(t, "", "extract", "--json", page)
	if err != nil {
		t.Fatalf("extract: %v", err)
	}
	var got extractOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("extract --json output %q: %v", out, err)
	}
	if got.Title == "" || !strings.Contains(got.Text, "First paragraph") || got.Links != 1 {
		t.Errorf("extract --json = %+v, want 1 link (the absolute one)", got)
	}
	// As saved from a site: the relative link resolves too.
	out, _, err = run(t, "", "extract", "--json", page, "--base", "https://example.org/a/p.html")
	if err != nil {
		t.Fatalf("extract --base: %v", err)
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Links != 2 || got.URL != "https://example.org/a/p.html" {
		t.Errorf("extract --base = %+v, want 2 links and the base as url", got)
	}
	if _, _, err := run(t, "", "extract", "--base", "example.org/a", page); err == nil || !strings.Contains(err.Error(), "want an absolute http(s) URL") {
		t.Errorf("extract with a relative --base: %v", err)
	}
}

// A URL that failed is listed by `crawl failed` and fetched again, and
// stored, by a rerun with --retry-failed.
func TestFailedAndRetryFailed(t *testing.T) {
	var mu sync.Mutex
	up := false
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ok := up
		mu.Unlock()
		if !ok {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<html><body><article><p>The site is back: a long enough article about the river clean-up,
the library's Sunday hours and the covered market, so that it can be fingerprinted.</p></article></body></html>`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	dir := t.TempDir()
	seeds := writeFile(t, dir, "seeds.txt", srv.URL+"/\n")
	data := filepath.Join(dir, "data")
	args := []string{"--seeds", seeds, "--data", data, "--set", "fetch.delay=0s", "--set", "fetch.retries=0", "--set", "log.level=warn"}
	if _, _, err := run(t, "", args...); !errors.Is(err, errNothingFetched) { // the site is down: exit 3
		t.Fatalf("crawl of a site that is down: %v, want errNothingFetched", err)
	}
	out, _, err := run(t, "", "failed", "--data", data, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var f failedJSON
	if err := json.Unmarshal([]byte(out), &f); err != nil || f.URL != srv.URL+"/" || !strings.Contains(f.Reason, "503") {
		t.Fatalf("crawl failed --json = %q (%v), want the seed with its 503", out, err)
	}
	mu.Lock()
	up = true
	mu.Unlock()
	if out, _, err = run(t, "", append(args, "--retry-failed")...); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "stored 1") {
		t.Errorf("rerun with --retry-failed did not store the page:\n%s", out)
	}
	if out, _, err = run(t, "", "failed", "--data", data); err != nil || out != "" {
		t.Errorf("crawl failed after the retry = %q, %v; want nothing", out, err)
	}
}

// A crawl in which every URL failed says so and ends in errNothingFetched
// (exit status 3); run again once it has nothing left to do, it succeeds.
func TestCrawlNothingFetched(t *testing.T) {
	srv := httptest.NewServer(demosite.New())
	url := srv.URL
	srv.Close() // connection refused from now on
	dir := t.TempDir()
	seeds := writeFile(t, dir, "seeds.txt", url+"/\n")
	data := filepath.Join(dir, "data")
	args := []string{"--seeds", seeds, "--data", data, "--set", "fetch.retries=0", "--set", "log.level=error"}
	out, _, err := run(t, "", args...)
	if !errors.Is(err, errNothingFetched) {
		t.Fatalf("crawl of a closed server: %v, want errNothingFetched", err)
	}
	if !strings.Contains(out, "URLs failed: 1") {
		t.Errorf("summary:\n%s", out)
	}
	if _, _, err := run(t, "", args...); err != nil {
		t.Errorf("rerun with nothing queued: %v, want success", err)
	}
	// A crawl that stored pages, rerun with only its dead links left to
	// retry, finished: exit 0.
	site := httptest.NewServer(demosite.New())
	defer site.Close()
	seeds = writeFile(t, dir, "site.txt", site.URL+"/\n")
	data = filepath.Join(dir, "site-data")
	for _, extra := range [][]string{nil, {"--retry-failed"}} {
		if _, _, err := run(t, "", append([]string{"--seeds", seeds, "--data", data, "--set", "fetch.retries=0", "--set", "fetch.delay=0s", "--set", "log.level=error"}, extra...)...); err != nil {
			t.Errorf("crawl of the demo site %v: %v", extra, err)
		}
	}
}

// The crawl's usage line (crawl --help, crawl help crawl) names every flag
// the crawl has.
func TestCrawlUsageNamesEveryFlag(t *testing.T) {
	fset, _ := (&Main{Stdout: io.Discard, Stderr: io.Discard}).crawlFlagSet()
	for _, args := range [][]string{{"--help"}, {"help", "crawl"}} {
		out, _, err := run(t, "", args...)
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		i := strings.Index(out, "crawl crawl ")
		if args[0] == "help" {
			i = strings.Index(out, "Usage: crawl crawl ")
		}
		if i < 0 {
			t.Fatalf("%q prints no usage line of the crawl:\n%s", args, out)
		}
		usage, _, _ := strings.Cut(out[i:], "\n")
		fset.VisitAll(func(f *flag.Flag) {
			if !strings.Contains(usage, "--"+f.Name+" ") && !strings.Contains(usage, "--"+f.Name+"]") {
				t.Errorf("%q: usage line %q leaves out --%s", args, usage, f.Name)
			}
		})
	}
}

// The error of one input reads as every command's error line does: no
// package names, nothing said twice ("crawler: fetch ...: redirect-loop:
// crawler: redirect chain ...").
func TestExtractErrorWithoutPackageNames(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/a":
			http.Redirect(w, r, "/b", http.StatusFound)
		default:
			http.Redirect(w, r, "/a", http.StatusFound)
		}
	}))
	defer srv.Close()
	for _, args := range [][]string{{"extract", srv.URL + "/a"}, {"extract", "--json", srv.URL + "/a"}} {
		out, _, err := run(t, "", args...)
		if err == nil {
			t.Fatalf("%q: no error for a redirect loop", args)
		}
		if !strings.Contains(out, "redirect") || strings.Contains(out, "crawler: ") {
			t.Errorf("%q printed %q, want the redirect loop without package names", args, out)
		}
	}
}
