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
var dropTags = setOf("script style template iframe svg canvas object embed button input select textarea dialog time link meta")

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

// noscriptText is the text (non-space bytes) a <noscript> must hold to be
// kept: the page is parsed as a browser without scripts sees it, so a
// blog whose article is rendered by a script and repeated in <noscript>
// keeps it, while "please enable JavaScript" notes and tracking pixels go.
const noscriptText = 200

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
		paywall login signin rating ratings stars poll tags tagcloud
		author bio disclaimer copyright donate
		kommentar kommentare werbung anzeige commentaires commentaire publicite comentarios comentario
		publicidad relacionadas relacionados
		meta toolbar tools
	`) {
		markers[m] = true
	}
	for _, m := range strings.Fields(`
		share shares sharing sharethis addthis social socials sns fenxiang
		byline dateline timestamp pubdate datetime date
		counter counters viewcount views pageviews hits readcount
		feed promo meta toolbar tools paywall
	`) {
		softMarkers[m] = true
	}
}

// navMarkers name navigation: an element so marked without a single link
// is something else (MathJax's "CtxtMenu_Attached" formula containers).
var navMarkers = setOf("breadcrumb breadcrumbs navbar navigation nav menu topbar")

// hasAnchor reports whether n has a link below it.
func hasAnchor(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && (c.Data == "a" || hasAnchor(c)) {
			return true
		}
	}
	return false
}

// softMarkers are the markers that also name containers of article text:
// a theme's content div with class "entry share", a blog's "date-posts"
// wrapper, a test report's "Section--Ads". An element marked only with
// them is kept when it holds prose (see prose).
var softMarkers = map[string]bool{}

// cleaner removes boilerplate from one tree.
type cleaner struct {
	total int // text bytes of the whole tree, for the "most of the text" guard
	// holders are the elements that contain the article: the ancestors
	// of an articleBody, main or sizeable article element. They are not
	// removed for their class ("theiaStickySidebar", "date-outer").
	holders map[*html.Node]bool
	// captions says whether figure captions and credits are removed.
	captions bool
}

// clean removes boilerplate below root and returns the text bytes that
// were there before. With captions set, figure captions and credits go
// too: that is done on readability's article, not before readability,
// whose scoring counts a caption as a paragraph of its figure.
func clean(root *html.Node, captions bool) int {
	c := cleaner{total: textLen(root), holders: make(map[*html.Node]bool), captions: captions}
	c.findHolders(root)
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
	if n.Data == "noscript" {
		return textLen(n) < noscriptText
	}
	if protected(n) || c.holders[n] {
		return false
	}
	if hidden(n) || role(n) || c.captions && caption(n) {
		return !c.mostText(n)
	}
	if chromeTags[n.Data] {
		// An article's own <header> holds its title and standfirst.
		return !c.mostText(n) && !(n.Data == "header" && proseOf(n, proseRun))
	}
	switch markedClass(n) {
	case markHard:
		return !c.mostText(n)
	case markSoft:
		return !c.mostText(n) && !prose(n)
	case markNav:
		// A shop's "tab-menu" of description tabs holds the product's
		// prose; a menu has none.
		return !c.mostText(n) && hasAnchor(n) && !prose(n)
	}
	return false
}

// maxCaptionText is the text (non-space bytes) above which a caption is
// kept: a caption of a sentence or more describes what the article is
// about (and Readability.js keeps it); shorter ones are labels and credits
// ("Foto: dpa", "The old town") that differ between two sites running the
// same story.
const maxCaptionText = 150

// caption reports whether n is a figure caption or a photo credit short
// enough to be a label (see maxCaptionText).
func caption(n *html.Node) bool {
	if !captionElem(n) {
		return false
	}
	return textLen(n) < maxCaptionText
}

// captionElem reports whether n is a figure caption or a photo credit.
func captionElem(n *html.Node) bool {
	if n.Data == "figcaption" {
		return true
	}
	for _, a := range n.Attr {
		if (a.Key == "class" || a.Key == "id") && a.Namespace == "" && classTokens(a.Val, isCaptionToken) {
			return true
		}
	}
	return false
}

func isCaptionToken(tok []byte) bool {
	switch string(tok) {
	case "caption", "captions", "credit", "credits", "copyright":
		return true
	}
	return false
}

// findHolders marks the ancestors of the elements that hold the article.
func (c *cleaner) findHolders(root *html.Node) {
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			if ch.Type != html.ElementNode || dropTags[ch.Data] {
				continue
			}
			if c.holdsArticle(ch) {
				for a := n; a != nil; a = a.Parent {
					c.holders[a] = true
				}
			}
			walk(ch)
		}
	}
	walk(root)
}

// holdsArticle reports whether n is an article container worth keeping its
// ancestors for: itemprop=articleBody, main or role=main with some text,
// with a paragraph's worth of text, or an <article> with a quarter of the page's text (a list of teaser
// <article>s in a "related" box has little text each).
func (c *cleaner) holdsArticle(n *html.Node) bool {
	switch {
	case n.Data == "article":
		return 4*textLenAtLeast(n, (c.total+3)/4) >= c.total && prose(n)
	case n.Data == "main" || attr(n, "role") == "main" || attr(n, "itemprop") == "articleBody":
		// Declared as the content: a short radio programme note counts.
		return textLenAtLeast(n, proseRun) >= proseRun
	}
	return false
}

// proseRun is the text (non-space bytes) a paragraph needs to count as
// prose, and proseTotal what the paragraphs of an element must add up to.
const (
	proseRun   = 120
	proseTotal = 400
)

// prose reports whether n holds article prose: paragraphs (p elements or
// text runs of at least proseRun bytes outside links) adding up to
// proseTotal bytes. Share bars, date lines, counters and link lists have
// none.
func prose(n *html.Node) bool { return proseOf(n, proseTotal) }

// proseOf reports whether the paragraphs of n add up to total bytes.
func proseOf(n *html.Node, total int) bool {
	sum := 0
	var walk func(n *html.Node) bool
	walk = func(n *html.Node) bool {
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			switch {
			case ch.Type == html.TextNode:
				if k := textLen(ch); k >= proseRun {
					sum += k
				}
			case ch.Type != html.ElementNode || dropTags[ch.Data] || ch.Data == "a":
			case ch.Data == "p":
				if k := textLen(ch); k >= proseRun {
					sum += k
				}
			default:
				if walk(ch) {
					return true
				}
			}
			if sum >= total {
				return true
			}
		}
		return false
	}
	return walk(n)
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
func markedClass(n *html.Node) mark {
	m := markNone
	for _, a := range n.Attr {
		if a.Namespace != "" {
			continue
		}
		switch {
		case a.Key == "class":
			m = max(m, hasMarker(a.Val))
		case a.Key == "id" && tokenCount(a.Val) <= 3:
			m = max(m, hasMarker(a.Val))
		}
	}
	return m
}

// mark is what the class and id tokens of an element say about it.
type mark int

const (
	markNone mark = iota
	markSoft      // only soft markers: boilerplate unless it holds prose
	markNav       // navigation markers: boilerplate when it has links
	markHard      // a hard marker: boilerplate
)

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

// classTokens reports whether hit is true for one of the lower-cased
// tokens of s that is not a property (split as hasMarker does), without
// allocating.
func classTokens(s string, hit func(tok []byte) bool) bool {
	return eachClassToken(s, func(tok []byte, afterProp, _ bool) bool {
		return !afterProp && hit(tok)
	})
}

// propWord reports whether tok makes the next token a property of the
// element rather than its role ("has-ads", "no_caption"), or its state
// ("isPaywall": an article behind a paywall, not the paywall's box).
func propWord(tok []byte) bool {
	switch string(tok) {
	case "has", "with", "no", "without", "is":
		return true
	}
	return false
}

// hasMarker splits s into tokens without allocating and looks each up.
func hasMarker(s string) mark {
	m := markNone
	eachClassToken(s, func(tok []byte, afterProp, modifier bool) bool {
		if !afterProp && !modifier && markers[string(tok)] {
			switch {
			case softMarkers[string(tok)]:
				m = max(m, markSoft)
			case navMarkers[string(tok)]:
				m = max(m, markNav)
			default:
				m = markHard
			}
		}
		return m == markHard
	})
	return m
}

// eachClassToken calls fn with each lower-cased token of a class or id
// value s, without allocating, until fn returns true (and then returns
// true). Tokens are runs of ASCII letters and digits, split at other bytes
// and at a lower-to-upper hump ("NavBar" -> "nav", "bar"; "AD" stays one);
// tokens over 32 bytes are skipped. afterProp: the token follows "has",
// "with", "no", "without" or "is", so it names a property or state of the
// element, not its role ("o-section--has-ads", "withComments",
// "isPaywall"). modifier: the token is
// in a BEM modifier ("TestReport__Section--Ads"), which describes a
// variant of its block; the block is what the element is.
func eachClassToken(s string, fn func(tok []byte, afterProp, modifier bool) bool) bool {
	var buf [32]byte
	n := 0
	prop, modifier := false, false
	flush := func() bool {
		tok := buf[:min(n, len(buf))]
		wasProp := prop
		prop = propWord(tok)
		stop := n > 0 && n <= len(buf) && fn(tok, wasProp, modifier)
		n = 0
		return stop
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c >= 'A' && c <= 'Z':
			if i > 0 && s[i-1] >= 'a' && s[i-1] <= 'z' && flush() {
				return true
			}
			c += 'a' - 'A'
		default:
			if flush() {
				return true
			}
			if c == '-' && i > 0 && s[i-1] == '-' {
				modifier = true
			} else if c == ' ' || c == '\t' || c == '\n' {
				modifier = false
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
		k := len(n.Data)
		for i := 0; i < len(n.Data); i++ {
			k -= int(htmlSpace[n.Data[i]])
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

// htmlSpace is 1 for the bytes HTML counts as white space.
var htmlSpace = [256]uint8{' ': 1, '\t': 1, '\n': 1, '\r': 1, '\f': 1}

// textLenAtLeast is textLen(n) when that is below limit, else some count
// of at least limit: the walk stops there, as the callers only compare.
func textLenAtLeast(n *html.Node, limit int) int {
	k := 0
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil && k < limit; c = c.NextSibling {
			switch {
			case c.Type == html.TextNode:
				k += textLen(c)
			case c.Type == html.ElementNode && dropTags[c.Data]:
			default:
				walk(c)
			}
		}
	}
	if n.Type == html.TextNode {
		return textLen(n)
	}
	walk(n)
	return k
}
