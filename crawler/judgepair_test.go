package crawler

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/internal/demosite"
)

// JudgePair (crawl distance) says of two texts what a crawl decides of
// the two pages holding them.
func TestJudgePairAgreesWithTheCrawl(t *testing.T) {
	texts := map[string]string{
		"/orig":  strings.Join(demosite.Words(1, 400), " "),
		"/other": strings.Join(demosite.Words(2, 400), " "),
	}
	edit := func(every int, w string) string {
		ws := demosite.Words(1, 400)
		for i := 0; i < len(ws); i += every {
			ws[i] = w
		}
		return strings.Join(ws, " ")
	}
	texts["/near"] = edit(50, "changed")
	texts["/far"] = edit(3, "rewritten")
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`<html><body><a href="/orig">o</a> <a href="/near">n</a> <a href="/far">f</a> <a href="/other">x</a></body></html>`))
	})
	for path, text := range texts {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(articleHTML("Story "+path, text)))
		})
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()
	opts := testOptions(t, srv.URL+"/")
	opts.K = 7
	runCrawl(t, opts)
	r := readResult(t, opts.DataDir, srv.URL)

	f, err := contentseen.NewFingerprinter(opts.Features)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/near", "/far", "/other"} {
		v, err := JudgePair(f, contentseen.DefaultThresholds(), opts.K, opts.ShortK, opts.ShortFeatures, texts["/orig"], texts[path])
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		got := ""
		if d := r.dropped[path]; d != nil {
			got = d.Reason
		}
		if got != v.Reason {
			t.Errorf("%s: the crawl decided %q, JudgePair %q (%+v)", path, got, v.Reason, v)
		}
		t.Log(path, fmt.Sprintf("%+v", v))
	}
}
