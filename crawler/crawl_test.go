package crawler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/internal/demosite"
	"github.com/simcrawl/simcrawl/storage"
)

// testOptions are options for crawling a local test server: no delays,
// robots obeyed, one worker so the order (and so which copy is kept) is
// breadth-first and deterministic.
func testOptions(t *testing.T, seeds ...string) Options {
	t.Helper()
	return Options{
		Seeds:        seeds,
		DataDir:      t.TempDir(),
		Scope:        Scope{AllowDomains: SeedHosts(seeds)},
		MaxDepth:     5,
		Parallelism:  1,
		PerHost:      1,
		Retries:      2,
		RetryBackoff: time.Millisecond,
		Fetch:        FetchOptions{UserAgent: "simcrawl-test", Timeout: 5 * time.Second, RespectRobots: true},
		K:            3,
		Features:     contentseen.Options{},
		KeepDropText: true,
		IndexMemory:  DefaultIndexMemory, // as the config's default
	}
}

func runCrawl(t *testing.T, opts Options) *Summary {
	t.Helper()
	c, err := Open(opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	sum, err := c.Run(context.Background())
	if cerr := c.Close(); cerr != nil {
		t.Errorf("Close: %v", cerr)
	}
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return sum
}

// crawlResult is what a data directory holds after a crawl, by URL path.
type crawlResult struct {
	stored  map[string]*storage.Page
	dropped map[string]*storage.Drop
	log     []storage.DropRecord
}

func readResult(t *testing.T, dir, base string) crawlResult {
	t.Helper()
	d, err := OpenData(dir, time.Second)
	if err != nil {
		t.Fatalf("OpenData: %v", err)
	}
	defer d.Close()
	ctx := context.Background()
	r := crawlResult{stored: map[string]*storage.Page{}, dropped: map[string]*storage.Drop{}}
	err = d.Store.Pages(ctx, false, func(p *storage.Page) error {
		r.stored[strings.TrimPrefix(p.URL, base)] = p
		return nil
	})
	if err != nil {
		t.Fatalf("Pages: %v", err)
	}
	err = d.Store.Drops(ctx, func(dr *storage.Drop) error {
		r.dropped[strings.TrimPrefix(dr.URL, base)] = dr
		return nil
	})
	if err != nil {
		t.Fatalf("Drops: %v", err)
	}
	f, err := os.Open(filepath.Join(dir, "dropped.jsonl"))
	if err != nil {
		t.Fatalf("drop log: %v", err)
	}
	defer f.Close()
	if err := storage.ReadDropLog(f, func(rec storage.DropRecord) error {
		r.log = append(r.log, rec)
		return nil
	}); err != nil {
		t.Fatalf("ReadDropLog: %v", err)
	}
	return r
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func TestCrawlDemoSite(t *testing.T) {
	site := demosite.New()
	srv := httptest.NewServer(site)
	defer srv.Close()
	opts := testOptions(t, srv.URL+"/")
	sum := runCrawl(t, opts)
	r := readResult(t, opts.DataDir, srv.URL)
	checkDemoPages(t, r)
	for path, orig := range demosite.Dropped {
		d, ok := r.dropped[path]
		if !ok {
			continue
		}
		p := r.stored[orig]
		if p == nil || d.DuplicateOf != p.ID {
			t.Errorf("%s: duplicate of page %d, want %s", path, d.DuplicateOf, orig)
		}
		if d.Distance > 3 {
			t.Errorf("%s: dropped at distance %d, want <= k = 3", path, d.Distance)
		}
	}
	if d := r.dropped["/mirror/river-cleanup"]; d != nil && d.Reason != "exact" {
		t.Errorf("exact mirror dropped with reason %q, want exact", d.Reason)
	}
	for _, p := range []string{"/about", "/contact"} {
		if pg := r.stored[p]; pg != nil && !pg.Thin {
			t.Errorf("%s: stored, but not marked thin", p)
		}
	}
	for _, p := range demosite.NeverFetched {
		if n := site.Hits(p); n != 0 {
			t.Errorf("%s requested %d times, want never", p, n)
		}
	}
	for p := range r.stored {
		if n := site.Hits(p); n != 1 {
			t.Errorf("%s requested %d times, want once", p, n)
		}
	}

	if len(r.log) != len(r.dropped) {
		t.Fatalf("drop log has %d lines, store has %d drops", len(r.log), len(r.dropped))
	}
	for _, rec := range r.log {
		path := strings.TrimPrefix(rec.URL, srv.URL)
		if want := srv.URL + demosite.Dropped[path]; rec.DuplicateOf != want {
			t.Errorf("drop log: %s duplicate_of %s, want %s", path, rec.DuplicateOf, want)
		}
		if rec.Reason != "exact" && rec.Reason != "near" {
			t.Errorf("drop log: %s reason %q", path, rec.Reason)
		}
		if rec.Time.IsZero() || rec.Title == "" || rec.Depth < 1 {
			t.Errorf("drop log: %s: incomplete record %+v", path, rec)
		}
	}
	if sum.Pages != len(demosite.Stored) || sum.Drops != len(demosite.Dropped) {
		t.Errorf("summary: %d pages, %d drops; want %d, %d", sum.Pages, sum.Drops, len(demosite.Stored), len(demosite.Dropped))
	}
}

// checkDemoPages checks that a crawl of the demo site stored and dropped
// the pages it lists.
func checkDemoPages(t *testing.T, r crawlResult) {
	t.Helper()
	want := append([]string(nil), demosite.Stored...)
	sort.Strings(want)
	if got := keys(r.stored); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("stored pages:\n got  %v\n want %v", got, want)
	}
	if got, want := keys(r.dropped), keys(demosite.Dropped); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("dropped pages:\n got  %v\n want %v", got, want)
	}
}

// A page that fails with 503 twice and then answers is retried and stored.
func TestCrawlRetriesThenStores(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<html><body><p><a href="/flaky">a flaky page</a></p></body></html>`))
	})
	mux.HandleFunc("/flaky", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n <= 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(articleHTML("Flaky", "The flaky page finally answered after two refusals, and its text about rivers, libraries, markets and tea gardens is long enough to be judged by the near-duplicate stage of the crawler.")))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	opts := testOptions(t, srv.URL+"/")
	runCrawl(t, opts)
	r := readResult(t, opts.DataDir, srv.URL)
	if r.stored["/flaky"] == nil {
		t.Fatalf("/flaky not stored after retries; stored %v", keys(r.stored))
	}
	if calls != 3 {
		t.Errorf("/flaky requested %d times, want 3", calls)
	}
}

// Stopping after a few pages and running again finishes the crawl without
// fetching any stored or dropped page twice.
func TestCrawlResumes(t *testing.T) {
	site := demosite.New()
	srv := httptest.NewServer(site)
	defer srv.Close()
	opts := testOptions(t, srv.URL+"/")
	opts.MaxPages = 3
	sum := runCrawl(t, opts)
	first := readResult(t, opts.DataDir, srv.URL)
	if len(first.stored) != 3 {
		t.Fatalf("first run stored %d pages, want 3 (max pages)", len(first.stored))
	}
	if sum.PageLimit != 3 {
		t.Errorf("summary PageLimit = %d, want 3: the user must be told the limit stopped the crawl", sum.PageLimit)
	}
	opts.MaxPages = 0
	runCrawl(t, opts)
	r := readResult(t, opts.DataDir, srv.URL)
	if len(r.stored) != len(demosite.Stored) || len(r.dropped) != len(demosite.Dropped) {
		t.Errorf("after resume: %d stored, %d dropped; want %d, %d", len(r.stored), len(r.dropped), len(demosite.Stored), len(demosite.Dropped))
	}
	for p := range r.stored {
		if n := site.Hits(p); n != 1 {
			t.Errorf("%s requested %d times over two runs, want once", p, n)
		}
	}
	for p := range r.dropped {
		if n := site.Hits(p); n != 1 {
			t.Errorf("%s requested %d times over two runs, want once", p, n)
		}
	}
}

func TestSecondCrawlOnSameDataIsRefused(t *testing.T) {
	opts := testOptions(t, "http://127.0.0.1:1/")
	opts.OpenTimeout = 100 * time.Millisecond
	c, err := Open(opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer c.Close()
	_, err = Open(opts)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: err = %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), "another crawl") {
		t.Errorf("second Open: message %q does not say another crawl holds it", err)
	}
}

func articleHTML(title, text string) string {
	return "<!DOCTYPE html><html><head><title>" + title + "</title></head><body><article><h1>" + title +
		"</h1><p>" + text + "</p></article></body></html>"
}

// Hostile pages end as recorded outcomes; the crawl neither crashes nor
// hangs.
func TestCrawlSurvivesBadPages(t *testing.T) {
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<html><body><a href="/binary">b</a> <a href="/huge">h</a> <a href="/loop">l</a>
<a href="/slow">s</a> <a href="/deep">d</a></body></html>`))
	})
	mux.HandleFunc("/binary", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write([]byte{0, 1, 2, 3, 0xff, 0xfe})
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html><body><article>"))
		para := []byte("<p>" + strings.Repeat("A long page keeps talking about rivers and markets. ", 40) + "</p>\n")
		for range 2000 { // ~4 MB, over the 1 MiB limit below
			if _, err := w.Write(para); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop2", http.StatusFound)
	})
	mux.HandleFunc("/loop2", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/deep", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html><body>" + strings.Repeat("<div>", 20000) + "deep text" + strings.Repeat("</div>", 20000) + "</body></html>"))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer close(release)

	opts := testOptions(t, srv.URL+"/")
	opts.Fetch.Timeout = 300 * time.Millisecond
	opts.Fetch.MaxBodySize = 1 << 20
	opts.Retries = 1
	sum := runCrawl(t, opts)
	r := readResult(t, opts.DataDir, srv.URL)

	if p := r.stored["/huge"]; p == nil || !p.Truncated {
		t.Errorf("/huge: %+v, want stored and marked truncated", p)
	}
	if r.stored["/deep"] == nil {
		t.Errorf("/deep (20,000 nested elements) not stored")
	}
	for _, p := range []string{"/binary", "/loop", "/slow"} {
		if r.stored[p] != nil {
			t.Errorf("%s stored", p)
		}
	}
	if sum.Run.Skipped < 1 {
		t.Errorf("binary body not counted as skipped: %+v", sum.Run)
	}
	if sum.Failed < 2 { // the redirect loop and the slow page (after its retry)
		t.Errorf("failed URLs = %d, want the loop and the slow page", sum.Failed)
	}
}

// A redirect to a URL the crawl fetches on its own is an alias, never a
// duplicate of itself; a redirect to a new URL stores the page once and
// marks the target seen, so it is not fetched again when linked.
func TestCrawlRedirects(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	body := articleHTML("River", "Volunteers pulled two tonnes of rubbish from the river on Saturday, weighing trolleys, tyres and bottles on a borrowed farm scale beside the old mill bridge before lunch.")
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(`<html><body><a href="/old">old</a> <a href="/news/river">river</a> <a href="/moved">moved</a></body></html>`))
		case "/old":
			http.Redirect(w, r, "/news/river", http.StatusMovedPermanently)
		case "/moved":
			http.Redirect(w, r, "/new-home", http.StatusMovedPermanently)
		case "/new-home":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(articleHTML("Home", "The library moved to a new home by the station, with longer opening hours, a larger children's floor and a workshop where residents borrow tools and instruments.") +
				`<a href="/new-home">self</a>`))
		case "/news/river":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(body))
		default:
			http.NotFound(w, r)
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	opts := testOptions(t, srv.URL+"/")
	sum := runCrawl(t, opts)
	r := readResult(t, opts.DataDir, srv.URL)
	if len(r.dropped) != 0 {
		t.Errorf("dropped %v; a redirect alias is not a duplicate", keys(r.dropped))
	}
	if r.stored["/news/river"] == nil || r.stored["/old"] != nil {
		t.Errorf("stored %v; want /news/river stored once and /old skipped as its alias", keys(r.stored))
	}
	if p := r.stored["/moved"]; p == nil || !strings.HasSuffix(p.FinalURL, "/new-home") {
		t.Errorf("/moved: %+v, want stored with final URL /new-home", p)
	}
	if n := hits["/new-home"]; n != 1 {
		t.Errorf("/new-home fetched %d times, want once (through the redirect)", n)
	}
	if sum.Run.Skipped != 1 {
		t.Errorf("skipped %d, want 1 (the alias)", sum.Run.Skipped)
	}
}

func TestReopenWithOtherLayoutSaysHowToContinue(t *testing.T) {
	opts := testOptions(t, "http://127.0.0.1:1/")
	opts.Layout = "10x28"
	c, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	opts.Layout = "4x16"
	_, err = Open(opts)
	if err == nil || !strings.Contains(err.Error(), "--set contentseen.layout=10x28") {
		t.Fatalf("reopen with another layout: err = %v, want a hint naming --set contentseen.layout=10x28", err)
	}
	if strings.Contains(err.Error(), "contentseen.features") {
		t.Errorf("the features agree, yet the hint names them: %v", err)
	}
	// Other features, same layout: the hint names the features only.
	opts.Layout = "10x28"
	opts.Features = contentseen.Options{Kind: contentseen.CharShingles, N: 4}
	_, err = Open(opts)
	if err == nil || !strings.Contains(err.Error(), "--set contentseen.features=") || strings.Contains(err.Error(), "contentseen.layout") {
		t.Errorf("reopen with other features: err = %v, want a hint naming contentseen.features alone", err)
	}
}

// A data directory made before tokenizer 2 (its index records the scheme
// without "tok") keeps working as it is: reopened with the default
// options, the crawl keeps fingerprinting with tokenizer 1, and the data
// directory's Fingerprinter is tokenizer 1 too. Other options are still a
// mismatch with a hint.
func TestLegacyTokenizerDataDirectory(t *testing.T) {
	opts := testOptions(t, "http://127.0.0.1:1/")
	opts.Features = contentseen.Options{Tokenizer: contentseen.Tokenizer1}
	c, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	opts.Features = contentseen.Options{}
	c, err = Open(opts)
	if err != nil {
		t.Fatalf("reopen a tokenizer 1 directory with the default options: %v", err)
	}
	if got := c.opts.Features.String(); got != "words,min=8" {
		t.Errorf("reopened crawl fingerprints with %q, want the directory's words,min=8", got)
	}
	if got := c.fper.Options().String(); got != "words,min=8" {
		t.Errorf("reopened crawl's Fingerprinter uses %q, want words,min=8", got)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := OpenData(opts.DataDir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	f, scheme, err := d.Fingerprinter()
	if err != nil {
		t.Fatal(err)
	}
	if scheme != "words,min=8" || f.Options().Tokenizer != contentseen.Tokenizer1 {
		t.Errorf("Data.Fingerprinter() = tokenizer %d, %q, %v; want tokenizer 1, words,min=8", f.Options().Tokenizer, scheme, err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	opts.Features = contentseen.Options{MinFeatures: 5}
	if _, err := Open(opts); err == nil || !strings.Contains(err.Error(), "--set contentseen.features=words,min=8") {
		t.Errorf("reopen with other options: err = %v, want a hint naming contentseen.features=words,min=8", err)
	}
}

// The k a crawl judged with is recorded, so that `crawl stats` reads the
// histograms against the right threshold.
func TestDataRecordsK(t *testing.T) {
	opts := testOptions(t, "http://127.0.0.1:1/")
	opts.K = 2
	c, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := OpenData(opts.DataDir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if k, ok, err := d.K(); err != nil || !ok || k != 2 {
		t.Errorf("K() = %d, %v, %v; want 2, true", k, ok, err)
	}
}

// A crawl into a directory that a dedup run filled skips the URLs already
// stored instead of failing on them or logging a page as its own duplicate;
// a redirect to an absurdly long URL fails that page, not the crawl.
func TestCrawlAfterDedupAndLongRedirect(t *testing.T) {
	article := func(n int) string {
		return articleHTML(fmt.Sprintf("Story %d", n), strings.Join(demosite.Words(uint64(n), 200), " "))
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<html><body><a href="/a">a</a> <a href="/long">long</a> <a href="/b">b</a></body></html>`))
	})
	mux.HandleFunc("/a", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(article(2))) // changed since the dedup run stored /a
	})
	mux.HandleFunc("/long", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/b?x="+strings.Repeat("y", 40<<10), http.StatusFound)
	})
	mux.HandleFunc("/b", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(article(3)))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	opts := testOptions(t, srv.URL+"/")
	runDedup(t, opts.DataDir, []*Record{{URL: srv.URL + "/a", Body: []byte(article(1))}}, nil)

	sum := runCrawl(t, opts)
	r := readResult(t, opts.DataDir, srv.URL)
	if len(r.dropped) != 0 {
		t.Errorf("dropped %v, want none", keys(r.dropped))
	}
	if r.stored["/b"] == nil || r.stored["/a"] == nil {
		t.Errorf("stored %v, want /a (from the dedup run) and /b", keys(r.stored))
	}
	if sum.Run.Skipped != 1 || sum.Failed != 1 {
		t.Errorf("skipped %d, failed %d; want /a skipped (stored) and /long failed", sum.Run.Skipped, sum.Failed)
	}
}

// MaxPages is exact with many workers: the stored count is read and
// raised under the commit lock.
func TestMaxPagesExactWithManyWorkers(t *testing.T) {
	g := &demosite.Generated{N: 60}
	srv := httptest.NewServer(g)
	defer srv.Close()
	opts := testOptions(t, srv.URL+"/p/0")
	opts.Parallelism, opts.PerHost, opts.MaxPages = 8, 8, 5
	sum := runCrawl(t, opts)
	if sum.Pages != 5 {
		t.Errorf("stored %d pages with max pages 5 and 8 workers", sum.Pages)
	}
	// Every page fetched is accounted for: the ones in flight at the
	// limit are held for the next run, and counted so. (The site's errors
	// are links past its last page, 404s: not fetched pages.)
	r := sum.Run
	if r.Fetched != r.Stored+r.DroppedExact+r.DroppedNear+r.Skipped+r.Held {
		t.Errorf("summary does not add up: %+v", r)
	}
	t.Logf("held %d of %d fetched", r.Held, r.Fetched)
}

// At debug level the log tells each page's story: fetched, then stored,
// dropped or skipped, with the reason.
func TestCrawlDebugLog(t *testing.T) {
	srv := httptest.NewServer(demosite.New())
	defer srv.Close()
	opts := testOptions(t, srv.URL+"/")
	var log strings.Builder
	opts.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	sum := runCrawl(t, opts)
	for msg, want := range map[string]int64{
		"msg=fetched ":            sum.Run.Fetched,
		"msg=stored ":             sum.Run.Stored,
		`msg="dropped duplicate"`: sum.Run.DroppedExact + sum.Run.DroppedNear,
		"msg=skipped ":            sum.Run.Skipped,
	} {
		if got := strings.Count(log.String(), msg); int64(got) != want || want == 0 {
			t.Errorf("%d lines %s, want %d (and some)", got, msg, want)
		}
	}
}

// cancelOnLog is a log writer that cancels a crawl once a line holding
// want is written, and keeps what was written.
type cancelOnLog struct {
	mu     sync.Mutex
	b      strings.Builder
	want   string
	cancel context.CancelFunc
}

func (w *cancelOnLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if strings.Contains(string(p), w.want) {
		w.cancel()
	}
	return len(p), nil
}

// A retry that waits long (a Retry-After of an hour, capped at 10
// minutes) is logged at info, so an idle crawl says what it waits for.
func TestLongRetryLoggedAtInfo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	opts := testOptions(t, srv.URL+"/")
	opts.Fetch.RespectRobots = false
	// Canceled once the line is logged; without it, failed after a while
	// rather than waiting out the 10 minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	log := &cancelOnLog{want: "msg=retry", cancel: cancel}
	opts.Logger = slog.New(slog.NewTextHandler(log, nil)) // info and above
	c, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Run(ctx)
	if cerr := c.Close(); cerr != nil {
		t.Fatal(cerr)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want it canceled once the retry was logged", err)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if !strings.Contains(log.b.String(), "level=INFO msg=retry") || !strings.Contains(log.b.String(), "after=10m0s") {
		t.Errorf("log lacks the retry at info, after the 10-minute cap:\n%s", log.b.String())
	}
}
