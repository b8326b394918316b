package crawler

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
)

// testSite is an httptest server that counts requests per RequestURI, so
// tests can assert what the server saw (and what it never saw).
type testSite struct {
	*httptest.Server
	mux *http.ServeMux

	mu   sync.Mutex
	hits map[string]int // guarded by mu
	uas  map[string]string
}

func newTestSite(t *testing.T) *testSite {
	t.Helper()
	s := &testSite{mux: http.NewServeMux(), hits: map[string]int{}, uas: map[string]string{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.RequestURI()]++
		s.uas[r.URL.RequestURI()] = r.UserAgent()
		s.mu.Unlock()
		s.mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *testSite) count(uri string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[uri]
}

func (s *testSite) serve(path, contentType string, body []byte) {
	s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.Write(body)
	})
}

func (s *testSite) redirect(from, to string, code int) {
	s.mux.HandleFunc(from, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, to, code)
	})
}

const testUA = "simcrawl-test/1.0 (+https://example.invalid/bot)"

func newTestFetcher(t *testing.T, edit func(*FetchOptions)) *Fetcher {
	t.Helper()
	o := DefaultFetchOptions()
	o.UserAgent = testUA
	o.Timeout = 10 * time.Second // a hung test fails instead of waiting 30 s
	if edit != nil {
		edit(&o)
	}
	f, err := NewFetcher(o)
	if err != nil {
		t.Fatalf("NewFetcher: %v", err)
	}
	return f
}

func wantKind(t *testing.T, err error, kind string, retryable bool) *FetchError {
	t.Helper()
	var fe *FetchError
	if !errors.As(err, &fe) {
		t.Fatalf("error = %v (%T), want *FetchError of kind %q", err, err, kind)
	}
	if fe.Kind != kind {
		t.Fatalf("Kind = %q, want %q (error: %v)", fe.Kind, kind, err)
	}
	if fe.Retryable() != retryable {
		t.Fatalf("Retryable() = %v, want %v (error: %v)", fe.Retryable(), retryable, err)
	}
	return fe
}

func TestFetchPage(t *testing.T) {
	s := newTestSite(t)
	body := []byte("<html><body><p>hello</p></body></html>")
	s.mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("X-Test", "yes")
		w.Write(body)
	})
	f := newTestFetcher(t, nil)

	resp, err := f.Fetch(t.Context(), s.URL+"/page")
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	if resp.Status != 200 || resp.URL != s.URL+"/page" || resp.FinalURL != s.URL+"/page" {
		t.Errorf("Status, URL, FinalURL = %d, %q, %q", resp.Status, resp.URL, resp.FinalURL)
	}
	if resp.ContentType != "text/html; charset=utf-8" || resp.Header.Get("X-Test") != "yes" {
		t.Errorf("ContentType = %q, X-Test = %q", resp.ContentType, resp.Header.Get("X-Test"))
	}
	if !bytes.Equal(resp.Body, body) || resp.Truncated || len(resp.Redirects) != 0 || resp.FetchedAt.IsZero() {
		t.Errorf("Body = %q, Truncated = %v, Redirects = %q, FetchedAt = %v", resp.Body, resp.Truncated, resp.Redirects, resp.FetchedAt)
	}
	s.mu.Lock()
	ua, robotsUA := s.uas["/page"], s.uas["/robots.txt"]
	s.mu.Unlock()
	if ua != testUA || robotsUA != testUA {
		t.Errorf("User-Agent seen by server: page %q, robots.txt %q; want %q", ua, robotsUA, testUA)
	}
}

// GBK "中文" is D6 D0 CE C4. colly v2.3.0 would transcode a body whose
// Content-Type names gbk; we must return the bytes as sent.
func TestFetchCharsetUntouched(t *testing.T) {
	gbk := []byte("<html><head><meta charset=\"gbk\"></head><body>\xd6\xd0\xce\xc4</body></html>")
	s := newTestSite(t)
	s.serve("/header", "text/html; charset=gbk", gbk)
	s.serve("/meta", "text/html", gbk)
	s.serve("/latin1", "text/plain; charset=ISO-8859-1", []byte("caf\xe9"))
	f := newTestFetcher(t, nil)
	for _, tc := range []struct{ path, ctype string }{
		{"/header", "text/html; charset=gbk"},
		{"/meta", "text/html"},
		{"/latin1", "text/plain; charset=ISO-8859-1"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			resp, err := f.Fetch(t.Context(), s.URL+tc.path)
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			want := gbk
			if tc.path == "/latin1" {
				want = []byte("caf\xe9")
			}
			if !bytes.Equal(resp.Body, want) {
				t.Errorf("Body = %q, want %q", resp.Body, want)
			}
			if resp.ContentType != tc.ctype {
				t.Errorf("ContentType = %q, want %q", resp.ContentType, tc.ctype)
			}
		})
	}
}

// Binary bodies come back byte for byte, including gzip files that colly
// would otherwise decompress because of their Content-Type or .xml.gz path.
func TestFetchBinaryUntouched(t *testing.T) {
	bin := make([]byte, 4096)
	for i := range bin {
		bin[i] = byte(i * 7)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write([]byte("<urlset></urlset>")); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	s := newTestSite(t)
	s.serve("/blob", "application/octet-stream", bin)
	s.serve("/image.png", "image/png", bin)
	s.serve("/archive", "application/gzip", gz.Bytes())
	s.serve("/sitemap.xml.gz", "application/octet-stream", gz.Bytes())
	f := newTestFetcher(t, nil)
	for path, want := range map[string][]byte{"/blob": bin, "/image.png": bin, "/archive": gz.Bytes(), "/sitemap.xml.gz": gz.Bytes()} {
		t.Run(path, func(t *testing.T) {
			resp, err := f.Fetch(t.Context(), s.URL+path)
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			if !bytes.Equal(resp.Body, want) {
				t.Errorf("Body differs: got %d bytes starting %x, want %d bytes starting %x", len(resp.Body), resp.Body[:min(8, len(resp.Body))], len(want), want[:8])
			}
		})
	}
}

func TestFetchTruncated(t *testing.T) {
	s := newTestSite(t)
	big := bytes.Repeat([]byte("0123456789"), 500) // 5000 bytes
	s.serve("/big", "text/html", big)
	s.serve("/exact", "text/html", big[:1000])
	f := newTestFetcher(t, func(o *FetchOptions) { o.MaxBodySize = 1000 })

	resp, err := f.Fetch(t.Context(), s.URL+"/big")
	if err != nil {
		t.Fatalf("Fetch /big: %v", err)
	}
	if len(resp.Body) != 1000 || !resp.Truncated || !bytes.Equal(resp.Body, big[:1000]) {
		t.Errorf("/big: len(Body) = %d, Truncated = %v; want 1000, true", len(resp.Body), resp.Truncated)
	}
	resp, err = f.Fetch(t.Context(), s.URL+"/exact")
	if err != nil {
		t.Fatalf("Fetch /exact: %v", err)
	}
	if len(resp.Body) != 1000 || resp.Truncated {
		t.Errorf("/exact: len(Body) = %d, Truncated = %v; want 1000, false", len(resp.Body), resp.Truncated)
	}
}

func TestFetchRedirectChain(t *testing.T) {
	s := newTestSite(t)
	s.redirect("/a", "/b", http.StatusFound)
	s.redirect("/b", "/c", http.StatusMovedPermanently)
	s.redirect("/c", "/d", http.StatusTemporaryRedirect)
	s.serve("/d", "text/html", []byte("done"))
	f := newTestFetcher(t, nil)

	resp, err := f.Fetch(t.Context(), s.URL+"/a")
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	if resp.URL != s.URL+"/a" || resp.FinalURL != s.URL+"/d" || string(resp.Body) != "done" {
		t.Errorf("URL, FinalURL, Body = %q, %q, %q", resp.URL, resp.FinalURL, resp.Body)
	}
	want := []string{s.URL + "/a", s.URL + "/b", s.URL + "/c"}
	if fmt.Sprint(resp.Redirects) != fmt.Sprint(want) {
		t.Errorf("Redirects = %q, want %q", resp.Redirects, want)
	}
}

func TestFetchRedirectLoop(t *testing.T) {
	s := newTestSite(t)
	s.redirect("/x", "/y", http.StatusFound)
	s.redirect("/y", "/x", http.StatusFound)
	f := newTestFetcher(t, nil)

	_, err := f.Fetch(t.Context(), s.URL+"/x")
	wantKind(t, err, KindRedirectLoop, false)
	if s.count("/x") != 1 || s.count("/y") != 1 {
		t.Errorf("server saw /x %d times, /y %d times; want 1 each", s.count("/x"), s.count("/y"))
	}
}

func TestFetchTooManyRedirects(t *testing.T) {
	s := newTestSite(t)
	for i := range 5 {
		s.redirect(fmt.Sprintf("/r%d", i), fmt.Sprintf("/r%d", i+1), http.StatusFound)
	}
	s.serve("/r5", "text/html", []byte("end"))

	f := newTestFetcher(t, func(o *FetchOptions) { o.MaxRedirects = 3 })
	_, err := f.Fetch(t.Context(), s.URL+"/r0")
	wantKind(t, err, KindTooManyRedirects, false)
	if n := s.count("/r4"); n != 0 {
		t.Errorf("server saw /r4 %d times after the limit of 3 redirects", n)
	}

	f = newTestFetcher(t, func(o *FetchOptions) { o.MaxRedirects = 5 })
	resp, err := f.Fetch(t.Context(), s.URL+"/r0")
	if err != nil {
		t.Fatalf("MaxRedirects 5: %v", err)
	}
	if len(resp.Redirects) != 5 || resp.FinalURL != s.URL+"/r5" {
		t.Errorf("Redirects = %q, FinalURL = %q", resp.Redirects, resp.FinalURL)
	}
}

func TestFetchStatus(t *testing.T) {
	s := newTestSite(t)
	s.mux.HandleFunc("/busy", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "120")
		http.Error(w, "slow down", http.StatusTooManyRequests)
	})
	s.mux.HandleFunc("/down", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "maintenance", http.StatusServiceUnavailable)
	})
	s.mux.HandleFunc("/gone", http.NotFound)
	f := newTestFetcher(t, nil)

	for _, tc := range []struct {
		path       string
		status     int
		retryable  bool
		retryAfter time.Duration
	}{
		{"/busy", 429, true, 120 * time.Second},
		{"/down", 503, true, 0},
		{"/gone", 404, false, 0},
	} {
		t.Run(tc.path, func(t *testing.T) {
			resp, err := f.Fetch(t.Context(), s.URL+tc.path)
			fe := wantKind(t, err, KindStatus, tc.retryable)
			if fe.Status != tc.status || fe.RetryAfter != tc.retryAfter {
				t.Errorf("Status, RetryAfter = %d, %v; want %d, %v", fe.Status, fe.RetryAfter, tc.status, tc.retryAfter)
			}
			if resp == nil || resp.Status != tc.status || len(resp.Body) == 0 {
				t.Errorf("want the error response returned too, got %+v", resp)
			}
		})
	}
}

func TestFetchParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"0", 0},
		{"-5", 0},
		{" 30 ", 30 * time.Second},
		{"soon", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
	} {
		if got := parseRetryAfter(tc.in, now); got != tc.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// blockingPath registers a handler that blocks until the test ends (or the
// client goes away) and signals on entered when a request arrives.
func blockingPath(t *testing.T, s *testSite, path string) (entered <-chan struct{}) {
	release := make(chan struct{})
	ch := make(chan struct{}, 1)
	s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		select {
		case ch <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	// Cleanups run last-in first-out: release runs before the server's Close,
	// which waits for handlers.
	t.Cleanup(func() { close(release) })
	return ch
}

func TestFetchCancel(t *testing.T) {
	s := newTestSite(t)
	entered := blockingPath(t, s, "/slow")
	f := newTestFetcher(t, nil)

	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-entered
		cancel()
	}()
	_, err := f.Fetch(ctx, s.URL+"/slow")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want one wrapping context.Canceled", err)
	}
	wantKind(t, err, KindCanceled, true)

	// An already-canceled ctx does not touch the network.
	_, err = f.Fetch(ctx, s.URL+"/never")
	if !errors.Is(err, context.Canceled) || s.count("/never") != 0 {
		t.Errorf("canceled ctx: error = %v, server saw /never %d times", err, s.count("/never"))
	}
}

func TestFetchTimeout(t *testing.T) {
	s := newTestSite(t)
	blockingPath(t, s, "/slow")
	f := newTestFetcher(t, func(o *FetchOptions) { o.Timeout = 200 * time.Millisecond })

	_, err := f.Fetch(t.Context(), s.URL+"/slow")
	wantKind(t, err, KindTimeout, true)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error = %v, want one wrapping context.DeadlineExceeded", err)
	}
}

// colly's visited check is not atomic; with it off and one Fetch per call,
// 32 workers fetching 200 distinct URLs must make exactly 200 page requests,
// each answered with its own body (no state shared between calls).
func TestFetchConcurrentEachURLOnce(t *testing.T) {
	s := newTestSite(t)
	s.mux.HandleFunc("/p/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "page %s", r.URL.Path)
	})
	f := newTestFetcher(t, nil)

	const n, workers = 200, 32
	urls := make(chan string)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for u := range urls {
				resp, err := f.Fetch(t.Context(), u)
				if err != nil {
					errs <- err
					continue
				}
				if want := "page " + strings.TrimPrefix(u, s.URL); string(resp.Body) != want || resp.FinalURL != u {
					errs <- fmt.Errorf("%s: FinalURL %q, Body %q", u, resp.FinalURL, resp.Body)
				}
			}
		})
	}
	for i := range n {
		urls <- fmt.Sprintf("%s/p/%d", s.URL, i)
	}
	close(urls)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := range n {
		if c := s.count(fmt.Sprintf("/p/%d", i)); c != 1 {
			t.Errorf("server saw /p/%d %d times, want 1", i, c)
		}
	}
	if c := s.count("/robots.txt"); c != 1 {
		t.Errorf("server saw /robots.txt %d times, want 1 (cached per host)", c)
	}
}

func TestFetchFragmentStripped(t *testing.T) {
	s := newTestSite(t)
	s.serve("/doc", "text/html", []byte("doc"))
	f := newTestFetcher(t, nil)
	for _, frag := range []string{"#a", "#b"} {
		resp, err := f.Fetch(t.Context(), s.URL+"/doc"+frag)
		if err != nil {
			t.Fatalf("Fetch %s: %v", frag, err)
		}
		if resp.URL != s.URL+"/doc" || resp.FinalURL != s.URL+"/doc" {
			t.Errorf("URL, FinalURL = %q, %q; want no fragment", resp.URL, resp.FinalURL)
		}
	}
	if c := s.count("/doc"); c != 2 {
		t.Errorf("server saw /doc %d times, want 2 (no visited check inside the fetcher)", c)
	}
}

func TestFetchRedirectOddTargets(t *testing.T) {
	s := newTestSite(t)
	s.redirect("/frag", "/doc#section", http.StatusFound)
	s.redirect("/ftp", "ftp://example.com/file", http.StatusFound)
	s.serve("/doc", "text/html", []byte("doc"))
	f := newTestFetcher(t, nil)

	resp, err := f.Fetch(t.Context(), s.URL+"/frag")
	if err != nil {
		t.Fatalf("Fetch /frag: %v", err)
	}
	if resp.FinalURL != s.URL+"/doc" {
		t.Errorf("FinalURL = %q, want %q (fragment dropped)", resp.FinalURL, s.URL+"/doc")
	}
	_, err = f.Fetch(t.Context(), s.URL+"/ftp")
	wantKind(t, err, KindBadURL, false)
}

func TestFetchBadURL(t *testing.T) {
	f := newTestFetcher(t, nil)
	for _, u := range []string{"", "not a url", "ftp://example.com/x", "http://", "/relative", "http://[::1"} {
		_, err := f.Fetch(t.Context(), u)
		wantKind(t, err, KindBadURL, false)
	}
}

func TestFetchConnectionRefused(t *testing.T) {
	s := httptest.NewServer(http.NotFoundHandler())
	addr := s.URL
	s.Close()
	f := newTestFetcher(t, func(o *FetchOptions) { o.RespectRobots = false })
	_, err := f.Fetch(t.Context(), addr+"/x")
	wantKind(t, err, KindConnection, true)
}

func TestFetchOptionsValidate(t *testing.T) {
	for _, o := range []FetchOptions{{Timeout: -1}, {MaxBodySize: -1}, {MaxRedirects: -1}, {RobotsTTL: -1}, {MaxBodySize: 1 << 62}} {
		if _, err := NewFetcher(o); err == nil {
			t.Errorf("NewFetcher(%+v) = nil error, want one", o)
		}
	}
	f, err := NewFetcher(FetchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if f.opts.UserAgent != DefaultUserAgent || f.opts.RobotsAgent != "simcrawl" || f.opts.Timeout != DefaultTimeout ||
		f.opts.MaxBodySize != DefaultMaxBodySize || f.opts.MaxRedirects != DefaultMaxRedirects || f.opts.RobotsTTL != DefaultRobotsTTL {
		t.Errorf("defaults not applied: %+v", f.opts)
	}
}

// TestFetchCollyPitfallsPinned pins the colly v2.3.0 behaviour that
// bodyTransport exists for: with DetectCharset off, colly still transcodes a
// body whose Content-Type names a charset, and it gunzips a body whose
// Content-Type says gzip. If this test starts failing after a colly upgrade,
// bodyTransport may be simplified.
func TestFetchCollyPitfallsPinned(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write([]byte("plain")); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	gbk := []byte("\xd6\xd0\xce\xc4")
	s := newTestSite(t)
	s.serve("/gbk", "text/html; charset=gbk", gbk)
	s.serve("/gz", "application/gzip", gz.Bytes())

	c := colly.NewCollector()
	c.DetectCharset = false
	c.AllowURLRevisit = true
	got := map[string][]byte{}
	c.OnResponse(func(r *colly.Response) { got[r.Request.URL.Path] = r.Body })
	for _, p := range []string{"/gbk", "/gz"} {
		if err := c.Visit(s.URL + p); err != nil {
			t.Fatalf("colly Visit %s: %v", p, err)
		}
	}
	if string(got["/gbk"]) != "中文" {
		t.Errorf("colly no longer transcodes declared charsets: body %q", got["/gbk"])
	}
	if string(got["/gz"]) != "plain" {
		t.Errorf("colly no longer gunzips application/gzip bodies: body %q", got["/gz"])
	}
}

// BenchmarkFetch compares one Fetch (colly clone, robots cache hit, body
// capture) with a bare net/http GET of the same 50 KB page on loopback.
func BenchmarkFetch(b *testing.B) {
	page := bytes.Repeat([]byte("<p>lorem ipsum dolor sit amet</p>\n"), 50<<10/35)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write(page)
	}))
	b.Cleanup(srv.Close)

	b.Run("fetcher", func(b *testing.B) {
		f, err := NewFetcher(DefaultFetchOptions())
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.SetBytes(int64(len(page)))
		for b.Loop() {
			if _, err := f.Fetch(b.Context(), srv.URL+"/page"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("net-http", func(b *testing.B) {
		client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
		b.ReportAllocs()
		b.SetBytes(int64(len(page)))
		for b.Loop() {
			resp, err := client.Get(srv.URL + "/page")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.ReadAll(resp.Body); err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
		}
	})
}

// A body that does not decode as its Content-Encoding says is a bad
// encoding, not a connection error: retrying gets the same bytes. A
// redirect without a Location says so.
func TestFetchBadEncodingAndNoLocation(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/lying-gzip":
			w.Header().Set("Content-Encoding", "gzip")
			w.Write([]byte("<html><body>plain, not gzip</body></html>"))
		case "/brotli":
			w.Header().Set("Content-Encoding", "br")
			w.Write([]byte("\x1b\x03\x00\xf8\xa5\x40\x02 not decodable here"))
		case "/brotli-503":
			w.Header().Set("Content-Encoding", "br")
			w.Header().Set("Retry-After", "5")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte("\x1b\x03\x00\xf8"))
		case "/empty-gzip":
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Length", "0")
			w.WriteHeader(http.StatusOK)
		case "/bad-location":
			w.Header().Set("Location", "http://[::1%zz/bad")
			w.WriteHeader(http.StatusFound)
		case "/not-modified":
			w.WriteHeader(http.StatusNotModified)
		case "/no-location":
			w.WriteHeader(http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	f := newTestFetcher(t, func(o *FetchOptions) { o.RespectRobots = false })
	_, err := f.Fetch(context.Background(), srv.URL+"/lying-gzip")
	var fe *FetchError
	if !errors.As(err, &fe) || fe.Kind != KindBadEncoding || fe.Retryable() {
		t.Errorf("Fetch(/lying-gzip) = %v, want a non-retryable %s", err, KindBadEncoding)
	}
	_, err = f.Fetch(context.Background(), srv.URL+"/brotli")
	if !errors.As(err, &fe) || fe.Kind != KindBadEncoding || !strings.Contains(err.Error(), `"br"`) {
		t.Errorf("Fetch(/brotli) = %v, want %s naming br", err, KindBadEncoding)
	}
	// The status decides for an error page, and an empty body is no page
	// in any encoding.
	_, err = f.Fetch(context.Background(), srv.URL+"/brotli-503")
	if !errors.As(err, &fe) || fe.Kind != KindStatus || fe.Status != 503 || fe.RetryAfter != 5*time.Second {
		t.Errorf("Fetch(/brotli-503) = %v, want status 503 with its Retry-After", err)
	}
	if _, err = f.Fetch(context.Background(), srv.URL+"/empty-gzip"); err != nil {
		t.Errorf("Fetch(/empty-gzip) = %v, want an empty page", err)
	}
	_, err = f.Fetch(context.Background(), srv.URL+"/no-location")
	if !errors.As(err, &fe) || fe.Kind != KindStatus || !strings.Contains(err.Error(), "status 302: a redirect without a Location header") {
		t.Errorf("Fetch(/no-location) = %v, want status 302 naming the missing Location", err)
	}
	_, err = f.Fetch(context.Background(), srv.URL+"/not-modified")
	if !errors.As(err, &fe) || fe.Kind != KindStatus || strings.Contains(err.Error(), "Location") {
		t.Errorf("Fetch(/not-modified) = %v, want status 304 alone", err)
	}
	_, err = f.Fetch(context.Background(), srv.URL+"/bad-location")
	if !errors.As(err, &fe) || fe.Kind != KindBadURL || fe.Retryable() {
		t.Errorf("Fetch(/bad-location) = %v, want a non-retryable %s", err, KindBadURL)
	}
}
