package crawler

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// Finding 6 of issue 13: a robots.txt answering 5xx was requested twice
// per attempt (once for its Crawl-delay, once by Fetch).
func TestRobots5xxOncePerAttempt(t *testing.T) {
	var robots, pages atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			robots.Add(1)
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		pages.Add(1)
		w.Write([]byte(articleHTML("A page", "Some text about a page that is never fetched.")))
	}))
	defer srv.Close()
	opts := testOptions(t, srv.URL+"/")
	opts.Retries = 2 // three attempts
	sum := runCrawl(t, opts)
	if sum.Failed != 1 {
		t.Errorf("%d URLs failed, want the seed", sum.Failed)
	}
	if n := robots.Load(); n != 3 {
		t.Errorf("robots.txt requested %d times over 3 attempts, want 3", n)
	}
	if n := pages.Load(); n != 0 {
		t.Errorf("the page was requested %d times with robots.txt unavailable", n)
	}
}
