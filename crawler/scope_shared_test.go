package crawler

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/simcrawl/simcrawl/internal/demosite"
	"github.com/simcrawl/simcrawl/internal/redistest"
)

// In a shared crawl whose scope is its seeds' hosts, a seed answering from
// another host of its site widens the scope of every worker: worker a
// fetches the seed (www.example.test -> example.test/home) and stops at
// its page limit; worker b, which joined with the crawl's recorded scope
// (www.example.test only), follows the links to example.test of the pages
// it takes from the queue. It would skip /c before the host was shared.
func TestSharedSeedRedirectScope(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		host := strings.Split(r.Host, ":")[0]
		switch {
		case r.URL.Path == "/robots.txt":
			http.NotFound(w, r)
		case host == "www.example.test" && r.URL.Path == "/":
			http.Redirect(w, r, "http://example.test/home", http.StatusMovedPermanently)
		case host == "example.test" && r.URL.Path == "/home":
			w.Write([]byte(`<html><body><p>` + strings.Join(demosite.Words(31, 120), " ") + `</p><a href="/a">a</a></body></html>`))
		case host == "example.test" && r.URL.Path == "/a":
			w.Write([]byte(`<html><body><p>` + strings.Join(demosite.Words(32, 120), " ") + `</p><a href="/c">c</a></body></html>`))
		case host == "example.test" && r.URL.Path == "/c":
			w.Write([]byte(articleHTML("C", strings.Join(demosite.Words(33, 300), " "))))
		default:
			http.NotFound(w, r)
		}
	})
	site := httptest.NewServer(mux)
	defer site.Close()
	// Every host name is the test server.
	transport := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, site.Listener.Addr().String())
	}}
	srv := redistest.Start(t)
	idx := sharedIndex(t)
	a := distWorkerWith(t, srv.Addr(), "scope", "worker-a", idx, func(o *Options) {
		o.Fetch.Transport = transport
		o.Scope = Scope{} // the seeds' hosts
		o.MaxPages = 1    // the seed only
	}, "http://www.example.test/")
	runWorkers(t, context.Background(), a)
	// a leaves, as cmd/crawl makes a worker do: /a, which it fetched and
	// held at its page limit, goes back to the queue for b.
	if err := a.opts.Distributed.Queue.(interface{ Leave(context.Context) error }).Leave(context.Background()); err != nil {
		t.Fatal(err)
	}
	b := distWorkerWith(t, srv.Addr(), "scope", "worker-b", idx, func(o *Options) {
		o.Fetch.Transport = transport
		o.Scope = Scope{AllowDomains: []string{"www.example.test"}} // the crawl's, as cmd/crawl gives a worker without seeds
	})
	runWorkers(t, context.Background(), b)
	ra := readResult(t, a.opts.DataDir, "http://example.test")
	rb := readResult(t, b.opts.DataDir, "http://example.test")
	if ra.stored["http://www.example.test/"] == nil || rb.stored["/a"] == nil {
		t.Fatalf("worker a stored %v, worker b %v; want the seed by a, /a by b", keys(ra.stored), keys(rb.stored))
	}
	if rb.stored["/c"] == nil {
		t.Errorf("worker b did not follow /a's link to /c on the host the seed answered from: stored %v", keys(rb.stored))
	}
}
