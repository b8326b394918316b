package crawler

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/internal/demosite"
	"github.com/simcrawl/simcrawl/storage"
)

// judgeSite serves an article and the copies the two-stage judge must
// drop, and distinct articles on one template it must keep. The texts are
// our own: random words from demosite's vocabulary, in paragraphs.
type judgeSite map[string]string

func (s judgeSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/robots.txt" {
		http.NotFound(w, r)
		return
	}
	body, ok := s[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprint(w, body)
}

// paragraphs cuts words into paragraphs of n words, each ending in a period.
func paragraphs(words []string, n int) []string {
	var ps []string
	for i := 0; i < len(words); i += n {
		ps = append(ps, strings.Join(words[i:min(i+n, len(words))], " ")+".")
	}
	return ps
}

// chrome wraps an article in a site's template: navigation, a sidebar of
// related links and a footer, which extraction removes.
func chrome(site, title, h1 string, paras []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html><html lang=en><head><title>%s</title></head><body>", title)
	fmt.Fprintf(&b, `<nav><a href="/">%s home</a> <a href="/about">About %s</a></nav>`, site, site)
	fmt.Fprintf(&b, "<main><article><h1>%s</h1>", h1)
	for _, p := range paras {
		fmt.Fprintf(&b, "<p>%s</p>", p)
	}
	fmt.Fprintf(&b, `</article><aside class="related"><h3>Related</h3><a href="/x">%s weekly digest</a></aside></main>`, site)
	fmt.Fprintf(&b, "<footer>Copyright %s. All rights reserved.</footer></body></html>", site)
	return b.String()
}

func newJudgeSite() judgeSite {
	words := demosite.Words(17, 240)
	orig := paragraphs(words, 40)

	// 2% of the words edited: every 50th word replaced.
	edited := append([]string(nil), words...)
	repl := demosite.Words(99, len(words)/50+1)
	for i := 25; i < len(edited); i += 50 {
		edited[i] = repl[i/50]
	}

	// Ads, a view counter and a comment thread injected as plain
	// paragraphs, so that extraction keeps them.
	withAds := append([]string(nil), orig[:2]...)
	withAds = append(withAds, "Advertisement: compare mortgage rates from twelve lenders today.")
	withAds = append(withAds, orig[2:4]...)
	withAds = append(withAds, "Sponsored stories from our partners appear below.")
	withAds = append(withAds, orig[4:]...)
	withAds = append(withAds, "Reader comment: thanks for writing this, very helpful.",
		"Reader comment: I saw the same thing happen last spring.")

	zh := []string{"位于山区的一座百年茶园本周首次向游客开放。茶园海拔超过一千米，常年云雾缭绕，适合茶树生长。",
		"游客可以参观采茶、制茶的全过程，并在茶室品尝当季新茶。园方表示，每天接待人数将限制在两百人以内。"}

	other1 := paragraphs(demosite.Words(23, 200), 40)
	other2 := paragraphs(demosite.Words(29, 200), 40)

	s := judgeSite{
		"/": `<html><head><title>Index</title></head><body><ul>` +
			`<li><a href="/a/orig">a</a></li><li><a href="/b/retitled">b</a></li>` +
			`<li><a href="/c/ads">c</a></li><li><a href="/d/edited">d</a></li>` +
			`<li><a href="/e/one">e1</a></li><li><a href="/e/two">e2</a></li>` +
			`<li><a href="/zh/orig">zh</a></li><li><a href="/zh/repost">zh2</a></li>` +
			`</ul></body></html>`,
		"/a/orig":     chrome("Gazette", "Harbour plan approved - Gazette", "Harbour plan approved", orig),
		"/b/retitled": chrome("Wire", "Council says yes to the harbour | Wire", "Council says yes to the harbour", orig),
		"/c/ads":      chrome("Portal", "Harbour plan approved - Portal", "Harbour plan approved", withAds),
		"/d/edited":   chrome("Daily", "Harbour plan approved - Daily", "Harbour plan approved", paragraphs(edited, 40)),
		"/e/one":      chrome("Gazette", "Library reopens - Gazette", "Library reopens", other1),
		"/e/two":      chrome("Gazette", "Bus route changes - Gazette", "Bus route changes", other2),
		"/zh/orig":    chrome("茶园", "山区茶园首次向游客开放 - 茶园新闻", "山区茶园首次向游客开放", zh),
		"/zh/repost":  chrome("转载站", "山区茶园首次向游客开放 - 转载", "山区茶园首次向游客开放 - 转载", zh),
	}
	return s
}

// TestCrawlJudge crawls copies that k = 3 on the SimHash alone missed or
// mislabelled (a retitled copy, injected ads and comments, 2% of the words
// edited, a Chinese repost under an amended headline) and distinct
// articles on one template, with the default radius and thresholds.
func TestCrawlJudge(t *testing.T) {
	srv := httptest.NewServer(newJudgeSite())
	defer srv.Close()
	opts := testOptions(t, srv.URL+"/")
	opts.K = 7
	runCrawl(t, opts)
	r := readResult(t, opts.DataDir, srv.URL)

	for _, p := range []string{"/", "/a/orig", "/e/one", "/e/two", "/zh/orig"} {
		if r.stored[p] == nil {
			t.Errorf("%s not stored; stored %v, dropped %v", p, keys(r.stored), keys(r.dropped))
		}
	}
	want := map[string]struct{ of, reason string }{
		"/b/retitled": {"/a/orig", storage.ReasonExact},
		"/c/ads":      {"/a/orig", storage.ReasonNear},
		"/d/edited":   {"/a/orig", storage.ReasonNear},
		"/zh/repost":  {"/zh/orig", storage.ReasonExact},
	}
	if len(r.dropped) != len(want) {
		t.Errorf("dropped %v, want %d pages", keys(r.dropped), len(want))
	}
	byURL := map[string]storage.DropRecord{}
	for _, rec := range r.log {
		byURL[strings.TrimPrefix(rec.URL, srv.URL)] = rec
	}
	for p, w := range want {
		rec, ok := byURL[p]
		if !ok {
			t.Errorf("%s not in the drop log", p)
			continue
		}
		if got := strings.TrimPrefix(rec.DuplicateOf, srv.URL); got != w.of || rec.Reason != w.reason {
			t.Errorf("%s: duplicate of %s (%s), want %s (%s)", p, got, rec.Reason, w.of, w.reason)
		}
		if rec.Distance > opts.K {
			t.Errorf("%s: distance %d beyond k = %d", p, rec.Distance, opts.K)
		}
		switch {
		case rec.Reason == storage.ReasonExact && (rec.Similarity != 1 || rec.Containment != 1):
			t.Errorf("%s: exact with similarity %v, containment %v; want 1, 1", p, rec.Similarity, rec.Containment)
		case rec.Reason == storage.ReasonNear && !(rec.Similarity >= 0.6 || rec.Containment >= 0.9):
			t.Errorf("%s: near with similarity %v, containment %v: not verified", p, rec.Similarity, rec.Containment)
		}
		if d := r.dropped[p]; d == nil || d.Similarity != rec.Similarity && round3(d.Similarity) != rec.Similarity {
			t.Errorf("%s: stored drop %+v disagrees with the log's similarity %v", p, d, rec.Similarity)
		}
		t.Logf("%s: %s of %s, distance %d, similarity %.3f, containment %.3f", p, rec.Reason, w.of, rec.Distance, rec.Similarity, rec.Containment)
	}
}

func round3(x float64) float64 { return float64(int(x*1000+0.5)) / 1000 }

// TestCrawlJudgeOldDataDir crawls into a data directory whose pages were
// stored before sketches (and before TextDigest): a copy of such a page
// is verified from the stored text, and labelled exact when that text is
// the same.
func TestCrawlJudgeOldDataDir(t *testing.T) {
	site := newJudgeSite()
	srv := httptest.NewServer(site)
	defer srv.Close()
	opts := testOptions(t, srv.URL+"/a/orig", srv.URL+"/e/one")
	opts.K = 7
	opts.MaxDepth = 0
	runCrawl(t, opts)

	// What an older version left: no sketches, digests of another kind.
	db, err := bolt.Open(filepath.Join(opts.DataDir, DBFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		top := tx.Bucket([]byte("pages"))
		for _, name := range []string{"sketch", "digest"} {
			if err := top.DeleteBucket([]byte(name)); err != nil {
				return err
			}
			if _, err := top.CreateBucket([]byte(name)); err != nil {
				return err
			}
		}
		return nil
	})
	if cerr := db.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}

	opts.Seeds = []string{srv.URL + "/b/retitled", srv.URL + "/c/ads", srv.URL + "/e/two"}
	runCrawl(t, opts)
	r := readResult(t, opts.DataDir, srv.URL)
	if r.stored["/e/two"] == nil {
		t.Errorf("/e/two not stored; dropped %v", keys(r.dropped))
	}
	for p, reason := range map[string]string{"/b/retitled": storage.ReasonExact, "/c/ads": storage.ReasonNear} {
		d := r.dropped[p]
		if d == nil || d.Reason != reason || d.DuplicateOf != r.stored["/a/orig"].ID {
			t.Errorf("%s: drop %+v, want %s of /a/orig", p, d, reason)
		}
	}
}
