package extract

import (
	"strings"

	"golang.org/x/net/html"
)

// Boilerplate removal. It runs on the whole page before readability (so
// that navigation and comment boxes cannot win the article vote) and again
// on readability's output (readability keeps some of them when they sit
// inside the article container).

// dropTags are removed wherever they are: they never hold article text.
// The tag maps are keyed by name, not atom: readability renames elements
// (div to p) by changing Data and leaves DataAtom stale.
var dropTags = setOf("script style noscript template iframe svg canvas object embed button input select textarea dialog time link meta")

// chromeTags are page chrome. They are removed unless they hold most of the
// text (some sites wrap the whole page in <header> or <aside>).
var chromeTags = setOf("nav header footer aside menu")

func setOf(names string) map[string]bool {
	m := make(map[string]bool)
	for _, n := range strings.Fields(names) {
		m[n] = true
	}
	return m
}

// markers are class and id tokens that mark boilerplate. Tokens are the
// lower-cased parts of a class or id split at non-alphanumerics and at
// camelCase humps, so "share-buttons" and "shareButtons" match "share",
// while "heading" never matches "head".
var markers = map[string]bool{}

func init() {
	for _, m := range strings.Fields(`
		ad ads adv advert adverts advertisement advertisements advertising adsbygoogle adslot adunit adbox
		sponsor sponsors sponsored promo promoted promotion outbrain taboola
		share shares sharing sharethis addthis social socials sns
		comment comments commentlist disqus respond
		related relatedposts feed recommend recommended recommendation recommendations
		counter counters viewcount views pageviews hits readcount
		breadcrumb breadcrumbs navbar navigation nav menu sidebar masthead topbar
		newsletter subscribe subscription signup cookie cookies consent popup
		byline dateline timestamp pubdate datetime date
		guanggao xgwz xgxw xgyd tuijian pinglun fenxiang
	`) {
		markers[m] = true
	}
}

// cleaner removes boilerplate from one tree.
type cleaner struct {
	total int // text bytes of the whole tree, for the "most of the text" guard
}

// clean removes boilerplate below root and returns the text bytes that
// were there before.
func clean(root *html.Node) int {
	c := cleaner{total: textLen(root)}
	c.walk(root)
	return c.total
}

func (c *cleaner) walk(n *html.Node) {
	for ch := n.FirstChild; ch != nil; {
		next := ch.NextSibling
		switch ch.Type {
		case html.CommentNode:
			n.RemoveChild(ch)
		case html.ElementNode:
			if c.drop(ch) {
				n.RemoveChild(ch)
			} else {
				c.walk(ch)
			}
		}
		ch = next
	}
}

func (c *cleaner) drop(n *html.Node) bool {
	if dropTags[n.Data] {
		return true
	}
	if protected(n) {
		return false
	}
	if chromeTags[n.Data] || hidden(n) || role(n) || markedClass(n) {
		return !c.mostText(n)
	}
	return false
}

// mostText reports whether n holds more than half of the tree's text; such
// an element is the article whatever its class says ("has-comments").
func (c *cleaner) mostText(n *html.Node) bool {
	return c.total > 0 && 2*textLen(n) > c.total
}

// protected elements are never removed for their class or id.
func protected(n *html.Node) bool {
	switch n.Data {
	case "html", "head", "body", "main", "article":
		return true
	}
	return attr(n, "role") == "main" || attr(n, "itemprop") == "articleBody"
}

func role(n *html.Node) bool {
	switch attr(n, "role") {
	case "navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar", "dialog", "alert":
		return true
	}
	return false
}

func hidden(n *html.Node) bool {
	for _, a := range n.Attr {
		switch a.Key {
		case "hidden":
			return true
		case "aria-hidden":
			if a.Val == "true" {
				return true
			}
		case "style":
			s := strings.ToLower(a.Val)
			if strings.Contains(s, "display") && strings.Contains(strings.ReplaceAll(s, " ", ""), "display:none") {
				return true
			}
		}
	}
	return false
}

// markedClass reports whether n's class or id carries a marker token. An
// id of more than three tokens is a slug made from a heading
// ("sharing-with-a-single-developer" in generated docs), not a role, so it
// is not looked at.
func markedClass(n *html.Node) bool {
	for _, a := range n.Attr {
		if a.Namespace != "" {
			continue
		}
		switch {
		case a.Key == "class" && hasMarker(a.Val):
			return true
		case a.Key == "id" && tokenCount(a.Val) <= 3 && hasMarker(a.Val):
			return true
		}
	}
	return false
}

// tokenCount counts the alphanumeric runs of s (camelCase humps aside).
func tokenCount(s string) int {
	k, in := 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if alnum && !in {
			k++
		}
		in = alnum
	}
	return k
}

// hasMarker splits s into tokens without allocating and looks each up.
func hasMarker(s string) bool {
	var buf [32]byte
	n := 0
	flush := func() bool {
		hit := n > 0 && n <= len(buf) && markers[string(buf[:n])]
		n = 0
		return hit
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c >= 'A' && c <= 'Z':
			// A hump starts a token unless the previous letter was upper
			// case too ("AD", "NavBar" -> "nav", "bar").
			if i > 0 && s[i-1] >= 'a' && s[i-1] <= 'z' && flush() {
				return true
			}
			c += 'a' - 'A'
		default:
			if flush() {
				return true
			}
			continue
		}
		if n < len(buf) {
			buf[n] = c
		}
		n++
	}
	return flush()
}

// textLen counts the non-space text bytes below n.
func textLen(n *html.Node) int {
	if n.Type == html.TextNode {
		k := 0
		for i := 0; i < len(n.Data); i++ {
			switch n.Data[i] {
			case ' ', '\t', '\n', '\r', '\f':
			default:
				k++
			}
		}
		return k
	}
	if n.Type == html.ElementNode && dropTags[n.Data] {
		return 0
	}
	k := 0
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		k += textLen(c)
	}
	return k
}
