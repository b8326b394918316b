package crawler

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/simcrawl/simcrawl/internal/demosite"
)

// A redirect is held to the crawl's scope as links are: a page redirecting
// to another host, or to an excluded path, is skipped without fetching the
// target. A seed's own redirect may leave the allowed domains (the site
// the user named answers from another name), not the excluded paths.
func TestRedirectsStayInScope(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{} // host + path
	mux := http.NewServeMux()
	var port string
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[strings.Split(r.Host, ":")[0]+r.URL.Path]++
		mu.Unlock()
		switch r.URL.Path {
		case "/":
			w.Write([]byte(`<html><body><a href="/away">away</a> <a href="/to-private">private</a></body></html>`))
		case "/away", "/seed-away":
			http.Redirect(w, r, "http://localhost:"+port+"/target", http.StatusFound)
		case "/to-private", "/seed-private":
			http.Redirect(w, r, "/private/x", http.StatusFound)
		case "/target", "/private/x":
			w.Write([]byte(articleHTML("Target", strings.Join(demosite.Words(11, 300), " "))))
		case "/robots.txt":
			http.NotFound(w, r)
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	port = srv.URL[strings.LastIndex(srv.URL, ":")+1:]

	opts := testOptions(t, srv.URL+"/", srv.URL+"/seed-away", srv.URL+"/seed-private")
	opts.Scope.Exclude = []*regexp.Regexp{regexp.MustCompile(`/private/`)}
	sum := runCrawl(t, opts)

	mu.Lock()
	defer mu.Unlock()
	if hits["localhost/target"] != 1 {
		t.Errorf("the seed's redirect to localhost/target was fetched %d times, want once", hits["localhost/target"])
	}
	if hits["127.0.0.1/private/x"] != 0 {
		t.Errorf("the excluded /private/x was fetched %d times", hits["127.0.0.1/private/x"])
	}
	r := readResult(t, opts.DataDir, srv.URL)
	if r.stored["/seed-away"] == nil {
		t.Errorf("the seed redirecting to another host was not stored: %v", r.stored)
	}
	for _, p := range []string{"/away", "/to-private", "/seed-private"} {
		if r.stored[p] != nil || r.dropped[p] != nil {
			t.Errorf("%s, a redirect out of scope, was stored or dropped", p)
		}
	}
	if sum.Run.Skipped != 3 {
		t.Errorf("skipped %d, want 3 (two links and a seed redirecting out of scope)", sum.Run.Skipped)
	}
}

// A seed answering from another host of its site brings that host into a
// scope that is the seeds' hosts (no AllowDomains given): its links are
// followed, on this run and on a resumed one. A seed sent to another site
// (a login service) brings nothing in.
func TestSeedRedirectExtendsScope(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		host := strings.Split(r.Host, ":")[0]
		switch {
		case r.URL.Path == "/robots.txt":
			http.NotFound(w, r)
		case host == "www.example.test" && r.URL.Path == "/":
			http.Redirect(w, r, "http://example.test/home", http.StatusMovedPermanently)
		case host == "www.example.test" && r.URL.Path == "/members":
			http.Redirect(w, r, "http://login.other.test/", http.StatusFound)
		case host == "example.test" && r.URL.Path == "/home":
			w.Write([]byte(`<html><body><p>` + strings.Join(demosite.Words(31, 120), " ") + `</p><a href="/a">a</a></body></html>`))
		case host == "example.test" && r.URL.Path == "/a":
			w.Write([]byte(`<html><body><p>` + strings.Join(demosite.Words(32, 120), " ") + `</p><a href="/c">c</a></body></html>`))
		case host == "example.test" && r.URL.Path == "/c":
			w.Write([]byte(articleHTML("C", strings.Join(demosite.Words(33, 300), " "))))
		case host == "login.other.test" && r.URL.Path == "/x":
			w.Write([]byte(articleHTML("X", strings.Join(demosite.Words(35, 300), " "))))
		case host == "login.other.test" && r.URL.Path == "/":
			w.Write([]byte(`<html><body><p>` + strings.Join(demosite.Words(34, 120), " ") + `</p><a href="/x">x</a></body></html>`))
		default:
			http.NotFound(w, r)
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	opts := testOptions(t, "http://www.example.test/", "http://www.example.test/members")
	// Every host name is the test server.
	opts.Fetch.Transport = &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
	}}
	opts.Scope = Scope{} // the seeds' hosts
	opts.MaxPages = 1    // a seed only: /a is fetched by the next run
	runCrawl(t, opts)
	opts.MaxPages = 0
	runCrawl(t, opts)
	r := readResult(t, opts.DataDir, "http://example.test")
	for _, p := range []string{"/a", "/c"} {
		if r.stored[p] == nil {
			t.Errorf("example.test%s not stored: %v", p, keys(r.stored))
		}
	}
	for p := range r.stored {
		if strings.Contains(p, "other.test/x") {
			t.Errorf("%s stored: a seed's redirect to another site brought it into scope", p)
		}
	}
}
