// Package demosite is a small, self-contained web site for `crawl demo` and
// the crawler's end-to-end tests: articles on a shared news template, an
// exact mirror, copies on other templates with ads, view counters and
// timestamps, a Chinese repost, thin pages, a robots.txt that disallows a
// section, and a page linked only from a mirror (a crawler that follows the
// links of dropped pages fetches it; ours must not).
//
// All pages are generated from the articles in articles.go, written for this
// project. The handler is safe for concurrent use.
package demosite

import (
	"fmt"
	"html"
	"net/http"
	"strings"
	"sync"
)

// Paths of the site that tests and the demo talk about.
const (
	PathHome          = "/"
	PathMirrorArchive = "/mirror/archive" // linked only from the exact mirror
	PathPrivate       = "/private/drafts" // disallowed by robots.txt
)

// Expected outcome of a crawl of the whole site, for tests and the README.
var (
	// Stored lists the pages a correct crawl stores.
	Stored = []string{
		"/", "/news/river-cleanup", "/news/library-hours", "/news/market-prices",
		"/zh/tea-garden", "/partners", "/about", "/contact",
	}
	// Dropped maps each page a correct crawl drops to the page it duplicates.
	Dropped = map[string]string{
		"/mirror/river-cleanup":     "/news/river-cleanup",
		"/syndicated/river-cleanup": "/news/river-cleanup",
		"/syndicated/market-prices": "/news/market-prices",
		"/reposts/tea-garden":       "/zh/tea-garden",
	}
	// NeverFetched lists pages a correct crawl never requests.
	NeverFetched = []string{PathMirrorArchive, PathPrivate}
)

// Site serves the demo pages and counts the requests it receives.
type Site struct {
	mu   sync.Mutex
	hits map[string]int // guarded by mu
}

// New returns a Site.
func New() *Site { return &Site{hits: make(map[string]int)} }

// Hits returns how many times path was requested.
func (s *Site) Hits(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// ServeHTTP implements http.Handler.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits[r.URL.Path]++
	s.mu.Unlock()

	body, ok := s.page(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	if r.URL.Path == "/robots.txt" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
	}
	fmt.Fprint(w, body)
}

func (s *Site) page(path string) (string, bool) {
	switch path {
	case "/robots.txt":
		return "User-agent: *\nDisallow: /private/\n", true
	case "/":
		return newsPage("The Valley Courier", "", homeBody(), nil), true
	case "/partners":
		return newsPage("Our partners", "", partnersBody(), nil), true
	case "/about":
		return newsPage("About", "", "<p>The Valley Courier. Local news.</p>", nil), true
	case "/contact":
		return newsPage("Contact", "", "<p>Write to the newsroom.</p>", nil), true
	case "/news/" + riverCleanup.slug:
		return newsArticle(riverCleanup, nil), true
	case "/news/" + libraryHours.slug:
		return newsArticle(libraryHours, nil), true
	case "/news/" + marketPrices.slug:
		return newsArticle(marketPrices, nil), true
	case "/zh/" + teaGarden.slug:
		return newsArticle(teaGarden, nil), true
	case "/mirror/" + riverCleanup.slug:
		// Same article and template; the mirror's navigation adds a link
		// that no other page has.
		return newsArticle(riverCleanup, []string{PathMirrorArchive}), true
	case "/syndicated/" + riverCleanup.slug:
		return blogArticle(riverCleanup, "Two tonnes of rubbish pulled from the river", "5,678 views"), true
	case "/syndicated/" + marketPrices.slug:
		return blogArticle(marketPrices, marketPrices.title, "Updated 3/4/2026 13:45"), true
	case "/reposts/" + teaGarden.slug:
		return blogArticle(teaGardenRepost, teaGardenRepost.title, "阅读 12345"), true
	case PathMirrorArchive:
		return newsPage("Mirror archive", "", "<p>Only the mirror links here.</p>", nil), true
	case PathPrivate:
		return newsPage("Drafts", "", "<p>Not for crawlers.</p>", nil), true
	}
	return "", false
}

func homeBody() string {
	var b strings.Builder
	b.WriteString("<h1>Today in the valley</h1><ul>")
	for _, a := range []article{riverCleanup, libraryHours, marketPrices} {
		fmt.Fprintf(&b, `<li><a href="/news/%s">%s</a></li>`, a.slug, html.EscapeString(a.title))
	}
	fmt.Fprintf(&b, `<li><a href="/zh/%s">%s</a></li>`, teaGarden.slug, teaGarden.title)
	b.WriteString(`</ul><p><a href="/partners">Partners</a> · <a href="/private/drafts">Drafts</a> · <a href="/missing">An old link</a></p>`)
	return b.String()
}

func partnersBody() string {
	return `<h1>Partner sites</h1><p>Our stories appear on these sites:</p><ul>
<li><a href="/mirror/river-cleanup">Mirror: river clean-up</a></li>
<li><a href="/syndicated/river-cleanup#top">Syndicated: river clean-up</a></li>
<li><a href="/syndicated/market-prices">Syndicated: market prices</a></li>
<li><a href="/reposts/tea-garden">转载：茶园</a></li>
</ul>`
}

// newsPage is the Courier's template: header, navigation, sidebar, footer.
func newsPage(title, meta, main string, extraNav []string) string {
	var nav strings.Builder
	for _, p := range append([]string{"/", "/about", "/contact"}, extraNav...) {
		fmt.Fprintf(&nav, `<li><a href="%s">%s</a></li>`, p, p)
	}
	return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>` + html.EscapeString(title) +
		` | The Valley Courier</title></head><body>
<header class="site-header"><a href="/">The Valley Courier</a><nav><ul>` + nav.String() + `</ul></nav></header>
<main><article>` + meta + main + `</article></main>
<aside class="sidebar related"><h2>Most read</h2><ul>
<li><a href="/news/river-cleanup">River clean-up</a></li><li><a href="/news/library-hours">Library hours</a></li>
<li><a href="/news/market-prices">Market prices</a></li></ul></aside>
<footer class="site-footer"><p>© The Valley Courier. All rights reserved.</p></footer>
</body></html>`
}

func newsArticle(a article, extraNav []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<h1>%s</h1>", html.EscapeString(a.title))
	meta := `<p class="byline">By the Courier staff · <time datetime="2026-11-02">2 November 2026</time> · <span class="views">1,234 views</span></p>`
	for _, p := range a.paras {
		fmt.Fprintf(&b, "<p>%s</p>\n", html.EscapeString(p))
	}
	return newsPage(a.title, meta, b.String(), extraNav)
}

// blogArticle is the same story on another site's template, with its own
// title, an advertisement inside the article and a counter or timestamp.
func blogArticle(a article, title, counter string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<!DOCTYPE html><html><head><meta charset="utf-8"><title>%s - Riverside Blog</title></head><body>
<div id="topbar"><a href="/">Riverside Blog</a> | <a href="/about">About</a></div>
<div class="post"><h2 class="post-title">%s</h2><div class="post-meta">%s</div><div class="post-body">`,
		html.EscapeString(title), html.EscapeString(title), html.EscapeString(counter))
	for i, p := range a.paras {
		fmt.Fprintf(&b, "<p>%s</p>\n", html.EscapeString(p))
		if i == 1 {
			b.WriteString(`<div class="ad-slot advertisement"><p>Advertisement: try Brightwater sparkling water today.</p></div>`)
		}
	}
	b.WriteString(`</div></div><div class="share-buttons"><a href="/share">Share</a></div>
<div id="footer">Riverside Blog, a hobby site.</div></body></html>`)
	return b.String()
}
