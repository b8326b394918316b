package crawler

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/simcrawl/simcrawl/internal/demosite"
)

// The summary a user reads adds up: the URLs decided are the sum of the
// parts it lists, every URL of the site is decided once, and "fetched"
// counts what it says, the pages the server answered with a 2xx body (a
// noindex page is fetched; a 404 and a URL robots.txt disallows are not).
func TestSummaryAddsUp(t *testing.T) {
	article := func(n int) string {
		return articleHTML(fmt.Sprintf("Story %d", n), strings.Join(demosite.Words(uint64(n), 200), " "))
	}
	var mu sync.Mutex
	ok := 0 // 2xx page answers, robots.txt aside
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			ok++
			mu.Unlock()
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(body))
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("User-agent: *\nDisallow: /private/\n"))
	})
	mux.HandleFunc("/{$}", page(`<html><body><a href="/a">a</a> <a href="/b">b</a> <a href="/copy-a">c</a>
<a href="/copy-b">d</a> <a href="/noindex">n</a> <a href="/missing">m</a> <a href="/private/x">p</a></body></html>`))
	mux.HandleFunc("/a", page(article(1)))
	mux.HandleFunc("/b", page(article(2)))
	mux.HandleFunc("/copy-a", page(article(1)))
	mux.HandleFunc("/copy-b", page(strings.Replace(article(2), "</p>", " Advertisement: buy now.</p>", 1)))
	mux.HandleFunc("/noindex", page(`<html><head><meta name="robots" content="noindex"></head><body><p>`+
		strings.Join(demosite.Words(3, 200), " ")+`</p></body></html>`))
	mux.HandleFunc("/private/x", page(article(4)))
	mux.HandleFunc("/missing", http.NotFound)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	opts := testOptions(t, srv.URL+"/")
	opts.K = 7 // the default: /copy-b is a near copy
	sum := runCrawl(t, opts)
	var out strings.Builder
	sum.Print(&out)
	t.Logf("%s", out.String())

	m := regexp.MustCompile(`This run: decided (\d+) URLs = stored (\d+) \((\d+) thin\) \+ dropped (\d+) exact \+ (\d+) near \+ skipped (\d+) \+ errors (\d+); fetched (\d+) \(pages received with a 2xx answer\)`).
		FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no \"decided N URLs = ...\" line in the summary:\n%s", out.String())
	}
	n := make([]int, len(m))
	for i := 1; i < len(m); i++ {
		n[i], _ = strconv.Atoi(m[i])
	}
	decided, stored, exact, near, skipped, errs, fetched := n[1], n[2], n[4], n[5], n[6], n[7], n[8]
	if stored+exact+near+skipped+errs != decided {
		t.Errorf("parts %d + %d + %d + %d + %d do not sum to decided %d", stored, exact, near, skipped, errs, decided)
	}
	// The site: /, /a, /b stored; /copy-a, /copy-b dropped; /noindex and
	// /private/x skipped; /missing an error.
	if decided != 8 || stored != 3 || exact+near != 2 || skipped != 2 || errs != 1 {
		t.Errorf("decided %d: stored %d, dropped %d, skipped %d, errors %d; want 8: 3, 2, 2, 1", decided, stored, exact+near, skipped, errs)
	}
	mu.Lock()
	defer mu.Unlock()
	if fetched != ok || fetched != 6 {
		t.Errorf("fetched %d, the server answered %d pages with 2xx; want 6 (all but /missing and /private/x)", fetched, ok)
	}
}
