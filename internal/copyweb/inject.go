package copyweb

import (
	"fmt"
	"math/rand/v2"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// A link is a title and a path on the web, for related boxes, sidebars and
// index pages.
type link struct{ title, path string }

func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

func insertAfter(n, after *html.Node) {
	if after.Parent == nil {
		return
	}
	after.Parent.InsertBefore(n, after.NextSibling)
}

func insertBefore(n, before *html.Node) {
	if before.Parent == nil {
		return
	}
	before.Parent.InsertBefore(n, before)
}

func prepend(parent, n *html.Node) { parent.InsertBefore(n, parent.FirstChild) }

// injectAds puts a banner at the top of the body and an ad box after the
// middle paragraph of the article.
func (p *page) injectAds(rng *rand.Rand, s *snippets) {
	box := func() *html.Node {
		return el("div", []string{"class", "ad-slot sponsored"},
			el("span", []string{"class", "ad-label"}, text(s.adLabel)),
			el("p", nil, el("a", []string{"href", "https://ads.example.net/click?id=" + fmt.Sprint(rng.IntN(1e6))}, text(pick(rng, s.ads)))))
	}
	if body := find(p.root, atom.Body); body != nil {
		prepend(body, box())
	}
	if len(p.paras) > 0 {
		insertAfter(box(), p.paras[len(p.paras)/2])
	}
}

// injectCounters puts a view counter and a date line before the article's
// first paragraph.
func (p *page) injectCounters(rng *rand.Rand, s *snippets) {
	line := el("div", []string{"class", "article-meta"},
		el("span", []string{"class", "views"}, text(fmt.Sprintf(s.views, 100+rng.IntN(200000)))),
		text(" · "),
		el("time", []string{"datetime", "2026-03-03T14:05"}, text(pick(rng, s.updated))))
	if len(p.paras) > 0 {
		insertBefore(line, p.paras[0])
	}
}

// injectComments appends a comment thread and a form after the article.
func (p *page) injectComments(rng *rand.Rand, s *snippets) {
	n := 2 + rng.IntN(3)
	sec := el("section", []string{"class", "comments", "id", "comments"},
		el("h3", nil, text(fmt.Sprintf(s.comments, n))))
	for i := range n {
		sec.AppendChild(el("div", []string{"class", "comment"},
			el("b", []string{"class", "comment-author"}, text(s.people[(i+rng.IntN(len(s.people)))%len(s.people)])),
			el("p", nil, text(pick(rng, s.remarks)))))
	}
	sec.AppendChild(el("p", []string{"class", "moderation"}, text(s.moderated)))
	sec.AppendChild(el("form", []string{"action", "/w?p=comment", "method", "post"},
		el("label", nil, text(s.leave)),
		el("textarea", []string{"name", "comment"})))
	insertAfter(sec, p.content)
}

// injectRelated appends a box of links to other articles of the web after
// the article.
func (p *page) injectRelated(rng *rand.Rand, s *snippets, links []link) {
	box := el("aside", []string{"class", "related"}, el("h3", nil, text(s.related)))
	ul := el("ul", nil)
	for range 5 {
		if len(links) == 0 {
			break
		}
		l := pick(rng, links)
		ul.AppendChild(el("li", nil, el("a", []string{"href", l.path}, text(l.title))))
	}
	box.AppendChild(ul)
	insertAfter(box, p.content)
}

// sourceLine adds a repost's source line: at the top of the article for
// Chinese (as 转载 notes are), at the bottom otherwise; and appends the
// language's repost mark to the title.
func (p *page) sourceLine(s *snippets, lang, origURL string) {
	line := el("p", []string{"class", "source-note"}, text(fmt.Sprintf(s.repost, origURL)))
	switch {
	case len(p.paras) == 0:
		return
	case lang == "zh":
		insertBefore(line, p.paras[0])
	default:
		insertAfter(line, p.paras[len(p.paras)-1])
	}
	if s.reposted != "" {
		p.appendTitle(s.reposted)
	}
}

// appendTitle appends suffix to the page's <title> and first <h1>.
func (p *page) appendTitle(suffix string) {
	for _, n := range []*html.Node{find(p.root, atom.Title), find(p.root, atom.H1)} {
		if n != nil {
			n.AppendChild(text(suffix))
		}
	}
}
