package extract

import (
	"bytes"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// tokenizerExtract is the path for pages the tree builder refuses
// (x/net/html rejects nesting deeper than 512 open elements): one
// tokenizer pass collects the title, links and visible text, with a line
// break at every block tag. It is linear in the input and cannot fail.
func tokenizerExtract(d *Document, body []byte, pageURL *url.URL) {
	d.Fallback = true
	ls := linkSet{base: pageURL}
	var text, title, anchor strings.Builder
	var w textWriter
	skipDepth := 0 // inside script, style, ...
	inTitle := false
	var href, rel string
	inA := false
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if inA {
				ls.add(href, rel, collapseSpace(anchor.String()))
			}
			d.Title = collapseSpace(title.String())
			d.Links = ls.out
			text.WriteString(w.b.String())
			d.Text = text.String()
			return
		case html.TextToken:
			switch {
			case inTitle:
				title.Write(z.Text())
			case skipDepth == 0 && !w.full():
				t := string(z.Text())
				w.text(t)
				if inA {
					anchor.WriteString(t)
				}
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			raw, hasAttr := z.TagName()
			name := string(raw)
			start := tt != html.EndTagToken
			switch {
			case name == "base" && start && len(ls.out) == 0:
				for hasAttr {
					var k, v []byte
					k, v, hasAttr = z.TagAttr()
					if string(k) == "href" {
						if b, err := pageURL.Parse(strings.TrimSpace(string(v))); err == nil {
							ls.base = b
						}
					}
				}
			case name == "title":
				inTitle = start && tt == html.StartTagToken
			case dropTags[name] && !voidOrInline[name]:
				if tt == html.StartTagToken {
					skipDepth++
				} else if tt == html.EndTagToken && skipDepth > 0 {
					skipDepth--
				}
			case name == "a":
				if inA {
					ls.add(href, rel, collapseSpace(anchor.String()))
					inA = false
				}
				if start {
					href, rel = "", ""
					for hasAttr {
						var k, v []byte
						k, v, hasAttr = z.TagAttr()
						switch string(k) {
						case "href":
							href = string(v)
						case "rel":
							rel = string(v)
						}
					}
					anchor.Reset()
					inA = href != ""
				}
			case blockTags[name]:
				w.newline = true
			}
		}
	}
}

// voidOrInline are dropTags that have no end tag (void elements),
// so they must not open a skipped region in the tokenizer path.
var voidOrInline = setOf("link meta input embed")
