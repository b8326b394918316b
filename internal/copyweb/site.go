package copyweb

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"
)

var shortTemplate = template.Must(template.New("brief").Parse(`<!DOCTYPE html>
<html lang="{{.Lang}}"><head><meta charset="utf-8"><title>{{.Title}}</title></head>
<body><div class="brief-site"><nav>{{range .Nav}}<a href="/w?p=home">{{.}}</a> {{end}}</nav>
<div class="brief"><h1>{{.Title}}</h1>{{range .Paras}}<p>{{.}}</p>{{end}}</div>
<footer>{{.Footer}}</footer></div></body></html>`))

// shortPages makes one short page of each candidate: its first paragraphs,
// 40 to 90 words (120 to 260 Han characters), in one shared template.
func (b *builder) shortPages(cands []candidate) ([]*Page, error) {
	var out []*Page
	for _, c := range cands {
		p, err := parsePage(c.src.HTML)
		if err != nil {
			return nil, fmt.Errorf("copyweb: parse %s: %w", c.src.ID, err)
		}
		var paras []string
		size, words := 0, spaced(p.paraText())
		for _, q := range p.paras {
			t := collapse(textOf(q))
			if !words {
				if r := []rune(t); size+len(r) > 260 {
					t = string(r[:max(0, 260-size)])
				}
				size += utf8.RuneCountInString(t)
			} else {
				w := strings.Fields(t)
				t = strings.Join(w[:min(len(w), 90-size)], " ")
				size += min(len(w), 90-size)
			}
			if t != "" {
				paras = append(paras, t)
			}
			if !words && size >= 120 || words && size >= 40 {
				break
			}
		}
		s := snippetSets[c.lang]
		if s == nil {
			s = snippetSets["en"]
		}
		var buf bytes.Buffer
		err = shortTemplate.Execute(&buf, map[string]any{"Lang": c.lang, "Title": c.title, "Paras": paras,
			"Nav": s.nav, "Footer": s.footer})
		if err != nil {
			return nil, fmt.Errorf("copyweb: short page: %w", err)
		}
		pg := &Page{ID: b.id("s"), Kind: Short, Cluster: b.cluster(), Source: c.src.ID, Title: c.title,
			Body: buf.Bytes(), ContentType: utf8HTML, html: buf.Bytes(), lang: c.lang, copyable: true}
		if err := b.web.add(pg); err != nil {
			return nil, err
		}
		out = append(out, pg)
	}
	return out, nil
}

var indexTemplate = template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title></head>
<body><h1>{{.Title}}</h1><ul>{{range .Links}}<li><a href="{{.Path}}">{{.Title}}</a></li>{{end}}</ul>
{{if .Next}}<p><a href="{{.Next}}">Next page</a></p>{{end}}</body></html>`))

// indexPerPage is the number of links on an index page.
const indexPerPage = 20

// indexPages lists every page on index pages of indexPerPage links, the
// pages to keep first, then copies, then copies of copies (each in random
// order), and puts a home
// page linking to all index pages first. Breadth-first, a crawler then
// meets the originals before their copies (ground truth accepts either).
func (b *builder) indexPages() error {
	rank := func(p *Page) int {
		switch {
		case p.Kind == Chain:
			return 2
		case p.Kind.Positive():
			return 1
		}
		return 0
	}
	// Shuffled within a rank: listed by kind, the index page of the GBK
	// copies named the same titles as the one before it, and was a copy.
	pages := shuffled(b.rng, b.web.Pages)
	slices.SortStableFunc(pages, func(x, y *Page) int { return rank(x) - rank(y) })
	var index []*Page
	for i := 0; i < len(pages); i += indexPerPage {
		var links []struct{ Title, Path string }
		for _, p := range pages[i:min(len(pages), i+indexPerPage)] {
			t := p.Title
			if t == "" {
				t = p.ID
			}
			links = append(links, struct{ Title, Path string }{t, p.Path()})
		}
		ip := &Page{ID: fmt.Sprintf("i%d", i/indexPerPage+1), Kind: Index, Cluster: b.cluster(), ContentType: utf8HTML}
		var buf bytes.Buffer
		err := indexTemplate.Execute(&buf, map[string]any{"Title": fmt.Sprintf("Articles, page %d", i/indexPerPage+1), "Links": links})
		if err != nil {
			return fmt.Errorf("copyweb: index page: %w", err)
		}
		ip.Body, ip.html, ip.Title = buf.Bytes(), buf.Bytes(), "Articles"
		index = append(index, ip)
	}
	var links []struct{ Title, Path string }
	for _, ip := range index {
		links = append(links, struct{ Title, Path string }{"Articles, page " + strings.TrimPrefix(ip.ID, "i"), ip.Path()})
	}
	var buf bytes.Buffer
	if err := indexTemplate.Execute(&buf, map[string]any{"Title": "A web of copies", "Links": links}); err != nil {
		return fmt.Errorf("copyweb: home page: %w", err)
	}
	home := &Page{ID: HomeID, Kind: Index, Cluster: b.cluster(), Title: "A web of copies", Body: buf.Bytes(), ContentType: utf8HTML}
	b.web.Pages = slices.Concat([]*Page{home}, index, pages)
	for _, p := range append([]*Page{home}, index...) {
		b.web.byID[p.ID] = p
	}
	return nil
}

// robotsTxt lets crawlers fetch the web's pages and nothing else, so that
// the corpus pages' own relative links are not fetched.
const robotsTxt = "User-agent: *\nAllow: /w?p=\nDisallow: /\n"

// Handler serves the web: /robots.txt and /w?p=ID, every page with its
// Content-Type (a GBK page declared in the header or only in its meta).
func (w *Web) Handler() http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
			fmt.Fprint(rw, robotsTxt)
			return
		case "/w":
			if p := w.byID[r.URL.Query().Get("p")]; p != nil {
				rw.Header().Set("Content-Type", p.ContentType)
				rw.Write(p.Body) //nolint:errcheck // a client gone away is its business
				return
			}
		}
		http.NotFound(rw, r)
	})
}
