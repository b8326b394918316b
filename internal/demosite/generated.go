package demosite

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Generated is a synthetic site of N article pages, /p/0 to /p/N-1, for
// crash tests and benchmarks: page i links to pages 3i+1..3i+3, i+1 and i+2 (a
// crawl from /p/0 reaches all of them even though it does not follow the
// links of duplicates), plus LinksPerPage
// links to /x/... pages (404) that fill the frontier. Every DupEvery-th
// page repeats the article of the page before it with one word added,
// a near-duplicate. Pages are padded with navigation, sidebar and footer
// markup to about PageBytes, like real news pages. A ShortShare of the
// articles are short (ShortWords words instead of about 480), as most pages
// of a real crawl are: the crawler judges a text of fewer than
// contentseen.short_features distinct features with the wider short radius.
//
// Safe for concurrent use.
type Generated struct {
	N            int
	DupEvery     int // 0 = no duplicates
	LinksPerPage int // extra links to /x/ pages, at ExtraLinkBase
	// ExtraLinkBase prefixes the /x/ links ("" = this site). Point it at
	// another name of this server, such as http://localhost:PORT, and set
	// SlowHost to that name: its robots.txt then asks for a 60 s
	// Crawl-delay, so its URLs pile up in the frontier as on a real crawl
	// with one slow host.
	ExtraLinkBase string
	SlowHost      string
	PageBytes     int           // approximate page size; 0 = small pages
	Latency       time.Duration // per request, to let tests stop a crawl mid-way
	// IndexPage serves / as a list of links to every page, so that a
	// crawl from / reaches each page at depth 1 whichever copy of a pair
	// it drops (a copy's links are not followed): the pages reached do
	// not depend on the crawl's order, as with several workers.
	IndexPage bool
	// ShortShare (0 to 1) of the articles, drawn by page number, are
	// ShortWords words long (0: 150, about 130 distinct words, under the
	// crawler's default short_features of 300) instead of 480 (about 380
	// distinct words). A copy is as short as the page it copies.
	ShortShare float64
	ShortWords int

	served atomic.Int64
	mu     sync.Mutex
	hits   map[int]int // guarded by mu
}

// Served returns the number of article pages served so far.
func (g *Generated) Served() int64 { return g.served.Load() }

// Hits returns how many times page i was requested.
func (g *Generated) Hits(i int) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.hits[i]
}

// IsDuplicate reports whether page i is a near-duplicate of page i-1.
func (g *Generated) IsDuplicate(i int) bool {
	return g.DupEvery > 0 && i > 0 && i%g.DupEvery == 0
}

// ServeHTTP implements http.Handler.
func (g *Generated) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/robots.txt" {
		if g.SlowHost != "" && strings.HasPrefix(r.Host, g.SlowHost) {
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("User-agent: *\nCrawl-delay: 60\n"))
			return
		}
		http.NotFound(w, r)
		return
	}
	if g.IndexPage && r.URL.Path == "/" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		var b strings.Builder
		b.WriteString("<!DOCTYPE html><html><head><title>All stories</title></head><body><ul>")
		for i := range g.N {
			fmt.Fprintf(&b, `<li><a href="/p/%d">Story %d</a></li>`, i, i)
		}
		b.WriteString("</ul></body></html>")
		w.Write([]byte(b.String()))
		return
	}
	n, ok := strings.CutPrefix(r.URL.Path, "/p/")
	i, err := strconv.Atoi(n)
	if !ok || err != nil || i < 0 || i >= g.N {
		http.NotFound(w, r)
		return
	}
	g.mu.Lock()
	if g.hits == nil {
		g.hits = map[int]int{}
	}
	g.hits[i]++
	g.mu.Unlock()
	if g.Latency > 0 {
		select {
		case <-time.After(g.Latency):
		case <-r.Context().Done():
			return
		}
	}
	g.served.Add(1)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write([]byte(g.page(i)))
}

func (g *Generated) page(i int) string {
	src := i
	if g.IsDuplicate(i) {
		src = i - 1
	}
	paras := articleText(src, g.articleWords(src))
	if src != i {
		paras = append(paras, "Reposted.")
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Story %d | The Generated Gazette</title>
<link rel="stylesheet" href="/static/site.css"><script>window.dataLayer=[];</script></head><body>
<header class="masthead"><a href="/">The Generated Gazette</a><nav class="menu"><ul>`, src)
	for s := range 12 {
		fmt.Fprintf(&b, `<li><a href="/section/%d">Section %d</a></li>`, s, s)
	}
	fmt.Fprintf(&b, "</ul></nav></header>\n<main><article><h1>Story %d</h1>\n", src)
	for _, p := range paras {
		fmt.Fprintf(&b, "<p>%s</p>\n", p)
	}
	b.WriteString(`</article><div class="related"><h2>Read next</h2><ul>`)
	for c := 3*i + 1; c <= 3*i+3 && c < g.N; c++ {
		fmt.Fprintf(&b, `<li><a href="/p/%d">Story %d</a></li>`, c, c)
	}
	for c := i + 1; c <= i+2 && c < g.N; c++ {
		fmt.Fprintf(&b, `<li><a href="/p/%d">Next story</a></li>`, c)
	}
	for x := range g.LinksPerPage {
		fmt.Fprintf(&b, `<li><a href="%s/x/%d/%d">More %d</a></li>`, g.ExtraLinkBase, i, x, x)
	}
	b.WriteString("</ul></div></main>\n")
	// Pad with the kind of markup real pages carry around the article.
	for b.Len() < g.PageBytes {
		b.WriteString(`<aside class="sidebar ad-slot"><div class="widget"><a href="/promo"><img src="/img/promo.png" alt="promo"></a>` +
			`<p class="share-buttons"><a href="/share?fb">Share</a> <a href="/share?tw">Post</a></p></div></aside>` + "\n")
	}
	b.WriteString(`<footer class="site-footer"><p>© The Generated Gazette</p></footer></body></html>`)
	return b.String()
}

// longWords is the length of an article that is not short.
const longWords = 480

// articleWords is the length of page i's article: longWords, or
// ShortWords for the ShortShare of the pages that are short.
func (g *Generated) articleWords(i int) int {
	if g.ShortShare <= 0 {
		return longWords
	}
	// A draw of its own, so that the articles' words do not depend on
	// ShortShare.
	if rand.New(rand.NewPCG(uint64(i), 0x5407)).Float64() >= g.ShortShare {
		return longWords
	}
	if g.ShortWords > 0 {
		return g.ShortWords
	}
	return 150
}

// articleText returns page i's article: n words in paragraphs of up to 80,
// drawn from a fixed vocabulary with a skewed distribution, deterministic
// in i (an article of 150 words is the first 150 of the one of 480).
func articleText(i, n int) []string {
	rng := rand.New(rand.NewPCG(uint64(i), 0x5eed))
	paras := make([]string, (n+79)/80)
	for p := range paras {
		words := make([]string, min(80, n-80*p))
		for w := range words {
			// Squaring skews the draw towards frequent words, as in text.
			f := rng.Float64()
			words[w] = vocabulary[int(f*f*float64(len(vocabulary)))]
		}
		paras[p] = strings.ToUpper(words[0][:1]) + words[0][1:] + " " + strings.Join(words[1:], " ") + "."
	}
	return paras
}

var vocabulary = func() []string {
	onsets := []string{"b", "c", "d", "f", "g", "h", "l", "m", "n", "p", "r", "s", "t", "v", "w", "br", "st", "tr"}
	vowels := []string{"a", "e", "i", "o", "u", "ea", "ou"}
	codas := []string{"", "n", "r", "s", "t", "nd", "ll"}
	var v []string
	for _, o := range onsets {
		for _, a := range vowels {
			for _, c := range codas {
				v = append(v, o+a+c, o+a+c+"er")
			}
		}
	}
	return v
}()

// Words returns n made-up words built from a small set of syllables:
// thousands of distinct words, so texts from two seeds are unrelated, and
// the same words for the same seed. Tests use them for articles that share
// nothing by chance.
func Words(seed uint64, n int) []string {
	syl := strings.Fields("ka lo mi ren tu sa vel dor pin queh az bo lith mar nu os pe ru sil tam")
	r := rand.New(rand.NewPCG(seed, 7))
	w := make([]string, n)
	for i := range w {
		var b strings.Builder
		for range 2 + r.IntN(2) {
			b.WriteString(syl[r.IntN(len(syl))])
		}
		w[i] = b.String()
	}
	return w
}
