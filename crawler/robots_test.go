package crawler

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const agentRobots = `User-agent: simcrawl-test
Disallow: /private
Crawl-delay: 2.5

User-agent: *
Allow: /
`

func TestRobotsDisallowForOurAgent(t *testing.T) {
	s := newTestSite(t)
	s.serve("/robots.txt", "text/plain", []byte(agentRobots))
	s.serve("/private/page", "text/html", []byte("secret"))
	s.serve("/public", "text/html", []byte("open"))

	ours := newTestFetcher(t, nil)
	_, err := ours.Fetch(t.Context(), s.URL+"/private/page")
	wantKind(t, err, KindDisallowed, false)
	if !errors.Is(err, ErrDisallowed) {
		t.Errorf("error = %v, want one wrapping ErrDisallowed", err)
	}
	if c := s.count("/private/page"); c != 0 {
		t.Errorf("server saw the disallowed page %d times", c)
	}
	if _, err := ours.Fetch(t.Context(), s.URL+"/public"); err != nil {
		t.Errorf("/public: %v", err)
	}

	other := newTestFetcher(t, func(o *FetchOptions) { o.UserAgent = "otherbot/2.0" })
	if _, err := other.Fetch(t.Context(), s.URL+"/private/page"); err != nil {
		t.Errorf("another agent on /private/page: %v", err)
	}

	ignoring := newTestFetcher(t, func(o *FetchOptions) { o.RespectRobots = false })
	if _, err := ignoring.Fetch(t.Context(), s.URL+"/private/page"); err != nil {
		t.Errorf("RespectRobots=false on /private/page: %v", err)
	}
}

func TestRobotsNotFoundAllowsAll(t *testing.T) {
	s := newTestSite(t)
	s.serve("/anything", "text/html", []byte("ok"))
	f := newTestFetcher(t, nil)
	if _, err := f.Fetch(t.Context(), s.URL+"/anything"); err != nil {
		t.Fatalf("Fetch with a 404 robots.txt: %v", err)
	}
	if s.count("/robots.txt") != 1 {
		t.Errorf("robots.txt requested %d times, want 1", s.count("/robots.txt"))
	}
}

// A 5xx robots.txt means "try later": the page is not requested, the error
// is retryable, the failure is not cached, and a recovered robots.txt works.
func TestRobotsServerErrorUnavailable(t *testing.T) {
	s := newTestSite(t)
	var broken atomic.Bool
	broken.Store(true)
	s.mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		if broken.Load() {
			http.Error(w, "oops", http.StatusInternalServerError)
			return
		}
		w.Write([]byte("User-agent: *\nDisallow: /nope\n"))
	})
	s.serve("/page", "text/html", []byte("page"))
	f := newTestFetcher(t, nil)

	for range 2 {
		_, err := f.Fetch(t.Context(), s.URL+"/page")
		fe := wantKind(t, err, KindRobotsUnavailable, true)
		if fe.Status != 500 {
			t.Errorf("Status = %d, want 500", fe.Status)
		}
	}
	if c := s.count("/page"); c != 0 {
		t.Fatalf("server saw /page %d times while robots.txt was failing", c)
	}
	if c := s.count("/robots.txt"); c != 2 {
		t.Errorf("robots.txt requested %d times, want 2 (failures are not cached)", c)
	}
	if _, err := f.CrawlDelay(t.Context(), s.Listener.Addr().String()); err == nil {
		t.Errorf("CrawlDelay with a failing robots.txt: nil error")
	}

	broken.Store(false)
	if _, err := f.Fetch(t.Context(), s.URL+"/page"); err != nil {
		t.Fatalf("after recovery: %v", err)
	}
	_, err := f.Fetch(t.Context(), s.URL+"/nope")
	wantKind(t, err, KindDisallowed, false)
}

func TestRobotsRateLimitedUnavailable(t *testing.T) {
	s := newTestSite(t)
	s.mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7")
		http.Error(w, "later", http.StatusTooManyRequests)
	})
	f := newTestFetcher(t, nil)
	_, err := f.Fetch(t.Context(), s.URL+"/page")
	fe := wantKind(t, err, KindRobotsUnavailable, true)
	if fe.RetryAfter != 7*time.Second {
		t.Errorf("RetryAfter = %v, want 7s", fe.RetryAfter)
	}
}

func TestRobotsNetworkErrorUnavailable(t *testing.T) {
	s := httptest.NewServer(http.NotFoundHandler())
	addr := s.URL
	s.Close()
	f := newTestFetcher(t, nil)
	_, err := f.Fetch(t.Context(), addr+"/page")
	wantKind(t, err, KindRobotsUnavailable, true)
	// The message names the robots.txt fetch once and leads with the
	// outer kind, which scripts read from `crawl failed`.
	msg := err.Error()
	robots := addr + "/robots.txt"
	if n := strings.Count(msg, robots); n != 1 {
		t.Errorf("error names %s %d times, want once: %s", robots, n, msg)
	}
	if want := "crawler: fetch " + robots + ": robots-unavailable: connection: "; !strings.HasPrefix(msg, want) {
		t.Errorf("error = %q, want prefix %q", msg, want)
	}
}

func TestRobotsCrawlDelay(t *testing.T) {
	s := newTestSite(t)
	s.serve("/robots.txt", "text/plain", []byte(agentRobots))
	none := newTestSite(t)
	f := newTestFetcher(t, nil)

	for _, host := range []string{s.Listener.Addr().String(), s.URL, s.URL + "/some/page"} {
		d, err := f.CrawlDelay(t.Context(), host)
		if err != nil || d != 2500*time.Millisecond {
			t.Errorf("CrawlDelay(%q) = %v, %v; want 2.5s", host, d, err)
		}
	}
	if c := s.count("/robots.txt"); c != 1 {
		t.Errorf("robots.txt requested %d times, want 1", c)
	}
	if d, err := f.CrawlDelay(t.Context(), none.Listener.Addr().String()); err != nil || d != 0 {
		t.Errorf("CrawlDelay without robots.txt = %v, %v; want 0", d, err)
	}
	other := newTestFetcher(t, func(o *FetchOptions) { o.UserAgent = "otherbot" })
	if d, err := other.CrawlDelay(t.Context(), s.URL); err != nil || d != 0 {
		t.Errorf("CrawlDelay for another agent = %v, %v; want 0", d, err)
	}
	if _, err := f.CrawlDelay(t.Context(), "bad host/with path"); err == nil {
		t.Errorf("CrawlDelay(bad host) = nil error")
	}
}

// The final URL after redirects must be allowed by the robots.txt of its own
// host: each redirect target is checked before it is requested.
func TestRobotsRedirectTargetChecked(t *testing.T) {
	other := newTestSite(t)
	other.serve("/robots.txt", "text/plain", []byte("User-agent: *\nDisallow: /closed\n"))
	other.serve("/closed", "text/html", []byte("closed"))
	other.serve("/open", "text/html", []byte("open"))

	s := newTestSite(t)
	s.serve("/robots.txt", "text/plain", []byte("User-agent: *\nDisallow: /private\n"))
	s.serve("/private", "text/html", []byte("private"))
	s.redirect("/to-private", "/private", http.StatusFound)
	s.redirect("/to-other-closed", other.URL+"/closed", http.StatusFound)
	s.redirect("/to-other-open", other.URL+"/open", http.StatusFound)
	f := newTestFetcher(t, nil)

	for _, path := range []string{"/to-private", "/to-other-closed"} {
		_, err := f.Fetch(t.Context(), s.URL+path)
		wantKind(t, err, KindDisallowed, false)
	}
	if s.count("/private") != 0 || other.count("/closed") != 0 {
		t.Errorf("disallowed redirect targets were requested: /private %d, other /closed %d", s.count("/private"), other.count("/closed"))
	}
	resp, err := f.Fetch(t.Context(), s.URL+"/to-other-open")
	if err != nil || resp.FinalURL != other.URL+"/open" {
		t.Fatalf("cross-host redirect: %v, %+v", err, resp)
	}
}

func TestRobotsTTL(t *testing.T) {
	s := newTestSite(t)
	s.serve("/robots.txt", "text/plain", []byte("User-agent: *\nDisallow:\n"))
	s.serve("/p", "text/html", []byte("p"))
	f := newTestFetcher(t, func(o *FetchOptions) { o.RobotsTTL = time.Hour })
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.robots.now = func() time.Time { return now }

	for _, step := range []time.Duration{0, 59 * time.Minute, 2 * time.Minute} {
		now = now.Add(step) // the test's only goroutine; Fetch runs synchronously
		if _, err := f.Fetch(t.Context(), s.URL+"/p"); err != nil {
			t.Fatal(err)
		}
	}
	if c := s.count("/robots.txt"); c != 2 {
		t.Errorf("robots.txt requested %d times over 61 minutes with a 1h TTL, want 2", c)
	}
}

func TestRobotsParseTolerant(t *testing.T) {
	for _, tc := range []struct {
		name, body, path string
		allowed          bool
	}{
		{"rule before user-agent", "Disallow: /x\nUser-agent: *\nDisallow: /private\n", "/private/a", false},
		{"rule before user-agent keeps rest", "Disallow: /x\nUser-agent: *\nDisallow: /private\n", "/x", true},
		{"bad crawl-delay", "User-agent: *\nCrawl-delay: soon\nDisallow: /private\n", "/private", false},
		{"empty", "", "/anything", true},
		{"query", "User-agent: *\nDisallow: /*?session=\n", "/a?session=1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := parseRobots([]byte(tc.body))
			if err != nil {
				t.Fatalf("parseRobots: %v", err)
			}
			u, err := parseFetchURL("http://example.com" + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if got := data.FindGroup("simcrawl").Test(robotsPath(u)); got != tc.allowed {
				t.Errorf("allowed(%q) = %v, want %v", tc.path, got, tc.allowed)
			}
		})
	}
}
