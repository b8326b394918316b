package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// maxTextBytes bounds the text kept per page. Fingerprinting needs far
// less, and it keeps the normalisation of hostile 30 MB pages cheap.
const maxTextBytes = 2 << 20

// blockTags start a new line before and after them, so that list items,
// cells and paragraphs are never glued together ("one" "two" -> "onetwo").
var blockTags = setOf(`address article aside blockquote body br caption center dd details
	dialog dir div dl dt fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup
	hr li main menu nav ol p pre section summary table tbody td tfoot th thead tr ul legend option`)

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
		if dropTags[n.Data] || n.Data == "head" || w.skip != nil && w.skip(n) {
			return
		}
	case html.DocumentNode:
	default:
		return
	}
	block := n.Type == html.ElementNode && blockTags[n.Data]
	if block {
		w.newline = true
	}
	if n.Data == "pre" {
		w.pre++
	}
	if n.Data == "img" && n.Type == html.ElementNode {
		// Images contribute nothing; alt text is too often "image".
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.node(c)
	}
	if n.Data == "pre" {
		w.pre--
	}
	if block {
		w.newline = true
	}
}

func (w *textWriter) text(s string) {
	for len(s) > 0 && !w.full() {
		if c := s[0]; c < utf8.RuneSelf {
			switch c {
			case '\n':
				if w.pre > 0 {
					w.newline = true
				} else {
					w.space = true
				}
				s = s[1:]
			case '\t', '\v', '\f', '\r', ' ', 0:
				w.space = true
				s = s[1:]
			default:
				// A run of ASCII that is written as it is, in one
				// piece: most text is, and a rune at a time was a
				// tenth of the stage. The cap allows what the rune
				// loop wrote: at least one byte, then up to
				// maxTextBytes.
				j := 1
				for j < len(s) && s[j] < utf8.RuneSelf && !asciiSpace(s[j]) {
					j++
				}
				w.separate()
				j = min(j, max(1, maxTextBytes-w.b.Len()))
				w.b.WriteString(s[:j])
				s = s[j:]
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case unicode.IsSpace(r):
			w.space = true
		case r == '\u200b' || r == '\ufeff' || r == '\u00ad':
			// Zero-width space, stray BOM and soft hyphen are invisible;
			// keeping them would make equal texts differ.
		default:
			w.separate()
			if r == utf8.RuneError {
				w.b.WriteRune(r) // an invalid byte becomes U+FFFD
			} else {
				w.b.WriteString(s[:size])
			}
		}
		s = s[size:]
	}
}

// asciiSpace reports whether the ASCII byte c is white space to text (as
// unicode.IsSpace says) or NUL.
func asciiSpace(c byte) bool {
	switch c {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0:
		return true
	}
	return false
}

// separate writes the line break or space pending before a word.
func (w *textWriter) separate() {
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
		if n.Type == html.ElementNode && dropTags[n.Data] {
			return stat{}
		}
		inLink = inLink || n.Data == "a"
		var s stat
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			cs := walk(c, inLink)
			s.text += cs.text
			s.link += cs.link
		}
		if n.Type == html.ElementNode && blockTags[n.Data] {
			stats[n] = s
		}
		return s
	}
	walk(root, false)
	return func(n *html.Node) bool {
		s, ok := stats[n]
		return ok && n.Data != "body" && s.link > 0 && 10*s.link > 8*s.text
	}
}
