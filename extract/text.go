package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxTextBytes bounds the text kept per page. Fingerprinting needs far
// less, and it keeps the normalisation of hostile 30 MB pages cheap.
const maxTextBytes = 2 << 20

// blockTags start a new line before and after them, so that list items,
// cells and paragraphs are never glued together ("one" "two" -> "onetwo").
var blockTags = map[atom.Atom]bool{
	atom.Address: true, atom.Article: true, atom.Aside: true, atom.Blockquote: true,
	atom.Body: true, atom.Br: true, atom.Caption: true, atom.Center: true, atom.Dd: true,
	atom.Details: true, atom.Dialog: true, atom.Dir: true, atom.Div: true, atom.Dl: true,
	atom.Dt: true, atom.Fieldset: true, atom.Figcaption: true, atom.Figure: true,
	atom.Footer: true, atom.Form: true, atom.H1: true, atom.H2: true, atom.H3: true,
	atom.H4: true, atom.H5: true, atom.H6: true, atom.Header: true, atom.Hgroup: true,
	atom.Hr: true, atom.Li: true, atom.Main: true, atom.Menu: true, atom.Nav: true,
	atom.Ol: true, atom.P: true, atom.Pre: true, atom.Section: true, atom.Summary: true,
	atom.Table: true, atom.Tbody: true, atom.Td: true, atom.Tfoot: true, atom.Th: true,
	atom.Thead: true, atom.Tr: true, atom.Ul: true, atom.Legend: true, atom.Option: true,
}

// textWriter renders a tree as lines of text with collapsed whitespace.
type textWriter struct {
	b       strings.Builder
	space   bool // a space is pending before the next word
	newline bool // a line break is pending before the next word
	pre     int  // depth of <pre> elements
	// skip, when set, is asked about every element; true drops it.
	skip func(*html.Node) bool
}

func (w *textWriter) full() bool { return w.b.Len() >= maxTextBytes }

func (w *textWriter) node(n *html.Node) {
	if w.full() {
		return
	}
	switch n.Type {
	case html.TextNode:
		w.text(n.Data)
		return
	case html.ElementNode:
		if dropTags[n.DataAtom] || n.DataAtom == atom.Head || w.skip != nil && w.skip(n) {
			return
		}
	case html.DocumentNode:
	default:
		return
	}
	block := n.Type == html.ElementNode && blockTags[n.DataAtom]
	if block {
		w.newline = true
	}
	if n.DataAtom == atom.Pre {
		w.pre++
	}
	if n.DataAtom == atom.Img && n.Type == html.ElementNode {
		// Images contribute nothing; alt text is too often "image".
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.node(c)
	}
	if n.DataAtom == atom.Pre {
		w.pre--
	}
	if block {
		w.newline = true
	}
}

func (w *textWriter) text(s string) {
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		s = s[size:]
		switch {
		case r == '\n' && w.pre > 0:
			w.newline = true
		case unicode.IsSpace(r) || r == 0:
			w.space = true
		default:
			if w.newline {
				if w.b.Len() > 0 {
					w.b.WriteByte('\n')
				}
				w.newline, w.space = false, false
			} else if w.space {
				if w.b.Len() > 0 {
					w.b.WriteByte(' ')
				}
				w.space = false
			}
			w.b.WriteRune(r)
		}
	}
}

// renderText returns the text below n, one block per line.
func renderText(n *html.Node, skip func(*html.Node) bool) string {
	w := textWriter{skip: skip}
	w.node(n)
	return w.b.String()
}

// linkDense returns a skip function for the fallback text: it drops blocks
// whose text is mostly anchor text (menus, link lists, tag clouds), computed
// once for the tree below root.
func linkDense(root *html.Node) func(*html.Node) bool {
	type stat struct{ text, link int }
	stats := make(map[*html.Node]stat)
	var walk func(n *html.Node, inLink bool) stat
	walk = func(n *html.Node, inLink bool) stat {
		if n.Type == html.TextNode {
			k := len(strings.TrimSpace(n.Data))
			if inLink {
				return stat{k, k}
			}
			return stat{k, 0}
		}
		if n.Type == html.ElementNode && dropTags[n.DataAtom] {
			return stat{}
		}
		inLink = inLink || n.DataAtom == atom.A
		var s stat
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			cs := walk(c, inLink)
			s.text += cs.text
			s.link += cs.link
		}
		if n.Type == html.ElementNode && blockTags[n.DataAtom] {
			stats[n] = s
		}
		return s
	}
	walk(root, false)
	return func(n *html.Node) bool {
		s, ok := stats[n]
		return ok && n.DataAtom != atom.Body && s.link > 0 && 10*s.link > 8*s.text
	}
}
