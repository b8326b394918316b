package copyweb

import (
	"bytes"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// A page is a parsed HTML document with the element that holds its article
// (found by our own small heuristic, independent of package extract, so
// that the dataset does not move when extraction changes).
type page struct {
	root    *html.Node
	content *html.Node // nil when no element holds enough paragraphs
	paras   []*html.Node
}

func parsePage(b []byte) (*page, error) {
	root, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	p := &page{root: root}
	p.content = contentNode(root)
	if p.content != nil {
		p.paras = paragraphs(p.content)
	}
	return p, nil
}

// paraText is the text of the article's paragraphs.
func (p *page) paraText() string {
	var b strings.Builder
	for _, q := range p.paras {
		b.WriteString(textOf(q))
		b.WriteByte('\n')
	}
	return b.String()
}

func (p *page) render() []byte {
	var buf bytes.Buffer
	if err := html.Render(&buf, p.root); err != nil {
		panic(err) // writing to a bytes.Buffer does not fail
	}
	return buf.Bytes()
}

// contentNode returns the article's element: the deepest element holding
// at least 60% of the page's paragraph text (paragraphs of 20 or more
// characters), even when a site splits the article over many blocks,
// without the sidebars; then its ancestors as long as each adds paragraphs
// and little else (articleParent): a lead or teaser in a block beside the
// body's blocks is the article's too, and a copy without it is no copy.
func contentNode(root *html.Node) *html.Node {
	under := map[*html.Node]int{} // paragraph text under each element
	total := 0
	walk(root, func(n *html.Node) bool {
		if skipped(n) || aside(n) {
			return false
		}
		if n.DataAtom != atom.P {
			return true
		}
		l := utf8.RuneCountInString(collapse(textOf(n)))
		if l < 20 || insideLink(n) || linkRunes(n)*2 >= l {
			return false // too short, or a teaser: a link to another page
		}
		total += l
		for a := n.Parent; a != nil && a.Type == html.ElementNode; a = a.Parent {
			under[a] += l
		}
		return false
	})
	if total == 0 {
		return nil
	}
	cur := root // descend while one child holds 60% (at most one can)
	for {
		var next *html.Node
		for c := cur.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && under[c]*10 >= total*6 {
				next = c
				break
			}
		}
		if next == nil {
			break
		}
		cur = next
	}
	if cur.Type != html.ElementNode {
		return nil
	}
	for articleParent(cur, under) {
		cur = cur.Parent
	}
	return cur
}

// articleParent reports whether n's parent belongs to the article too: it
// adds paragraph text beside n (under: the paragraph text below each
// element), and that is at least 70% of all the text it adds, so that
// climbing takes in a lead paragraph but not a header, a menu or a list of
// links. The body is never the article's element.
func articleParent(n *html.Node, under map[*html.Node]int) bool {
	up := n.Parent
	if up == nil || up.Type != html.ElementNode || up.DataAtom == atom.Body || up.DataAtom == atom.Html {
		return false
	}
	addedParas := under[up] - under[n]
	if addedParas <= 0 {
		return false
	}
	addedText := utf8.RuneCountInString(collapse(textOf(up))) - utf8.RuneCountInString(collapse(textOf(n)))
	return addedParas*10 >= addedText*7
}

// paragraphs returns the <p> elements under n with 20 or more characters.
func paragraphs(n *html.Node) []*html.Node {
	var out []*html.Node
	walk(n, func(c *html.Node) bool {
		if skipped(c) || c != n && aside(c) {
			return false
		}
		if c.DataAtom == atom.P {
			if utf8.RuneCountInString(collapse(textOf(c))) >= 20 {
				out = append(out, c)
			}
			return false
		}
		return true
	})
	return out
}

func skipped(n *html.Node) bool {
	return n.Type == html.ElementNode && (n.DataAtom == atom.Script || n.DataAtom == atom.Style || n.DataAtom == atom.Noscript || n.DataAtom == atom.Template)
}

// notArticle matches the class or id of blocks whose paragraphs are not the
// article's: a long comment thread ("forum" in SPIP, as on
// trafilatura/pages/blog.mondediplo.net.*) must not pull the article's
// element up to one holding the comments too, or take its place. overlay
// matches a cookie notice or a pop-up, hidden until shown, which can hold
// more paragraphs than a short article (trafilatura/pages/seglerblog.*: a
// GDPR dialog; jis.gov.jm-*: a pop-up).
var (
	notArticle = regexp.MustCompile(`(?i)comment|respond|reply|forum|sidebar|footer|related`)
	overlay    = regexp.MustCompile(`(?i)cookie|gdpr|consent|modal|popup|popmake`)
)

// insideLink reports whether n is inside a link (a teaser card whose
// whole block is one <a>).
func insideLink(n *html.Node) bool {
	for a := n.Parent; a != nil; a = a.Parent {
		if a.Type == html.ElementNode && a.DataAtom == atom.A {
			return true
		}
	}
	return false
}

// linkRunes counts the letters of n's text inside links. A paragraph that
// is inside a link or mostly link text is a teaser of another page (a "you may also like"
// grid, an author's other stories), not the article: such grids
// outweighed the article on trafilatura/pages/mindmegette.* and
// football.ua.*.
func linkRunes(n *html.Node) int {
	l := 0
	walk(n, func(c *html.Node) bool {
		if skipped(c) {
			return false
		}
		if c.Type == html.ElementNode && c.DataAtom == atom.A {
			l += utf8.RuneCountInString(collapse(textOf(c)))
			return false
		}
		return true
	})
	return l
}

func aside(n *html.Node) bool {
	if n.Type != html.ElementNode {
		return false
	}
	if n.DataAtom == atom.Aside || n.DataAtom == atom.Footer || n.DataAtom == atom.Nav {
		return true
	}
	// On <body> and <html> the overlay words say what the page shows
	// ("modal-open", "cookies-not-set"), not what a block is.
	page := n.DataAtom == atom.Body || n.DataAtom == atom.Html
	for _, a := range n.Attr {
		if (a.Key == "class" || a.Key == "id") && (notArticle.MatchString(a.Val) || !page && overlay.MatchString(a.Val)) {
			return true
		}
	}
	return false
}

// walk calls fn on n and, while fn returns true, on its descendants.
func walk(n *html.Node, fn func(*html.Node) bool) {
	if !fn(n) {
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

func textOf(n *html.Node) string {
	var b strings.Builder
	walk(n, func(c *html.Node) bool {
		if skipped(c) {
			return false
		}
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
			b.WriteByte(' ')
		}
		return true
	})
	return b.String()
}

// textNodes returns the text nodes under n, outside scripts and styles.
func textNodes(n *html.Node) []*html.Node {
	var out []*html.Node
	walk(n, func(c *html.Node) bool {
		if skipped(c) {
			return false
		}
		if c.Type == html.TextNode && strings.TrimSpace(c.Data) != "" {
			out = append(out, c)
		}
		return true
	})
	return out
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// find returns the first element with atom a under n, or nil.
func find(n *html.Node, a atom.Atom) *html.Node {
	var found *html.Node
	walk(n, func(c *html.Node) bool {
		if found != nil {
			return false
		}
		if c.Type == html.ElementNode && c.DataAtom == a {
			found = c
			return false
		}
		return true
	})
	return found
}

// hanShare is the share of Han characters among the letters of s.
func hanShare(s string) float64 {
	var han, letters int
	for _, r := range s {
		if unicode.IsLetter(r) {
			letters++
			if unicode.Is(unicode.Han, r) {
				han++
			}
		}
	}
	if letters == 0 {
		return 0
	}
	return float64(han) / float64(letters)
}

// spaced reports whether s is written with spaces between words: less
// than a third of its letters are of a script without them (Han, kana,
// Thai, Lao, Khmer, Myanmar).
func spaced(s string) bool {
	var unspaced, letters int
	for _, r := range s {
		if !unicode.IsLetter(r) {
			continue
		}
		letters++
		if unspacedLetter(r) {
			unspaced++
		}
	}
	return unspaced*3 < letters
}

func unspacedLetter(r rune) bool {
	return r > 0x2e80 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar)
}

// el builds an element with attributes given as name, value pairs and the
// given children.
func el(tag string, attrs []string, kids ...*html.Node) *html.Node {
	n := &html.Node{Type: html.ElementNode, Data: tag, DataAtom: atom.Lookup([]byte(tag))}
	for i := 0; i+1 < len(attrs); i += 2 {
		n.Attr = append(n.Attr, html.Attribute{Key: attrs[i], Val: attrs[i+1]})
	}
	for _, k := range kids {
		n.AppendChild(k)
	}
	return n
}

func text(s string) *html.Node { return &html.Node{Type: html.TextNode, Data: s} }

// detach removes n from its parent, if any.
func detach(n *html.Node) {
	if n.Parent != nil {
		n.Parent.RemoveChild(n)
	}
}
