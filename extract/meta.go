package extract

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// readMeta fills the fields that come from the head, and the links
// (resolved against <base href> when there is one), reading the tree before
// anything mutates it. One walk collects what it needs: a goquery selection
// per field walked the whole tree six times.
func readMeta(d *Document, root *html.Node, pageURL *url.URL) {
	var (
		baseHref, ogTitle, lang   string
		hasBase, hasOG, hasLang   bool
		title                     *html.Node
		canonical, metas, anchors []*html.Node
	)
	// Elements in document order, as the selectors "base[href]", "title",
	// `meta[property="og:title"]`, "link[rel][href]", "html[lang]", "meta"
	// and "a[href], area[href]" found them (attribute names in any
	// namespace).
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			switch c.Data {
			case "a", "area":
				if _, ok := attrOK(c, "href"); ok {
					anchors = append(anchors, c)
				}
			case "base":
				if !hasBase {
					baseHref, hasBase = attrOK(c, "href")
				}
			case "title":
				if title == nil {
					title = c
				}
			case "meta":
				if !hasOG {
					if hasAttrVal(c, "property", "og:title") {
						ogTitle, hasOG = attrOr(c, "content", ""), true
					}
				}
				metas = append(metas, c)
			case "link":
				_, rel := attrOK(c, "rel")
				_, href := attrOK(c, "href")
				if rel && href {
					canonical = append(canonical, c)
				}
			case "html":
				if !hasLang {
					lang, hasLang = attrOK(c, "lang")
				}
			}
			walk(c)
		}
	}
	walk(root)

	base := pageURL
	if hasBase {
		if u, err := pageURL.Parse(strings.TrimSpace(baseHref)); err == nil {
			base = u
		}
	}
	if title != nil {
		d.Title = collapseSpace(allText(title))
	}
	if d.Title == "" {
		d.Title = collapseSpace(ogTitle)
	}
	for _, n := range canonical {
		if hasToken(attrOr(n, "rel", ""), "canonical") {
			d.CanonicalURL = resolve(base, attrOr(n, "href", ""))
			break
		}
	}
	if hasLang {
		d.Lang = primaryLang(lang)
	}
	for _, n := range metas {
		name := strings.ToLower(attrOr(n, "name", attrOr(n, "http-equiv", attrOr(n, "property", ""))))
		content := attrOr(n, "content", "")
		switch name {
		case "robots", "googlebot":
			ni, nf := robotsDirectives(content)
			d.NoIndex = d.NoIndex || ni
			d.NoFollow = d.NoFollow || nf
		case "content-language", "language", "og:locale", "dc.language":
			if d.Lang == "" {
				d.Lang = primaryLang(content)
			}
		}
	}
	d.Links = links(anchors, base)
}

// attrOK returns n's first attribute named key in any namespace, as CSS
// selectors match it, and whether there is one.
func attrOK(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// hasAttrVal reports whether n has an attribute key="val", as the CSS
// selector [key="val"] matches it.
func hasAttrVal(n *html.Node, key, val string) bool {
	for _, a := range n.Attr {
		if a.Key == key && a.Val == val {
			return true
		}
	}
	return false
}

// attrOr is attrOK's value, or def when n has no such attribute.
func attrOr(n *html.Node, key, def string) string {
	if v, ok := attrOK(n, key); ok {
		return v
	}
	return def
}

// allText concatenates every text node below n.
func allText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// linkSet accumulates links in document order, one per URL.
type linkSet struct {
	base     *url.URL
	index    map[string]int
	resolved map[string]string // href -> resolve(base, href)
	out      []Link
}

func (ls *linkSet) add(href, rel, text string) {
	// Menus, footers and teaser boxes repeat hrefs; each is resolved
	// once.
	u, ok := ls.resolved[href]
	if !ok {
		u = resolve(ls.base, href)
		if ls.resolved == nil {
			ls.resolved = make(map[string]string)
		}
		ls.resolved[href] = u
	}
	if u == "" {
		return
	}
	nofollow := hasToken(rel, "nofollow") || hasToken(rel, "ugc") || hasToken(rel, "sponsored")
	if i, ok := ls.index[u]; ok {
		ls.out[i].NoFollow = ls.out[i].NoFollow && nofollow
		if ls.out[i].Text == "" {
			ls.out[i].Text = text
		}
		return
	}
	if ls.index == nil {
		ls.index = make(map[string]int)
	}
	ls.index[u] = len(ls.out)
	ls.out = append(ls.out, Link{URL: u, Text: text, NoFollow: nofollow})
}

func links(nodes []*html.Node, base *url.URL) []Link {
	// Sized for the anchors up front: growing the maps rehashed them.
	ls := linkSet{base: base, index: make(map[string]int, len(nodes)), resolved: make(map[string]string, len(nodes))}
	for _, n := range nodes {
		text := linkText(n)
		if text == "" {
			text = collapseSpace(imgAlt(n))
		}
		if text == "" {
			text = collapseSpace(attr(n, "alt")) // <area alt>
		}
		ls.add(attr(n, "href"), attr(n, "rel"), text)
	}
	return ls.out
}

// resolve makes href absolute against base, drops the fragment and returns
// "" for anything but http and https.
func resolve(base *url.URL, href string) string {
	href = strings.TrimSpace(href)
	if href == "" || strings.HasPrefix(href, "#") {
		return ""
	}
	u, err := base.Parse(href)
	if err != nil {
		return ""
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return ""
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// robots parses X-Robots-Tag values; see robotsDirectives.
func robots(xRobotsTag string) (noindex, nofollow bool) {
	for _, part := range strings.Split(xRobotsTag, ",") {
		part = strings.TrimSpace(part)
		// "googlebot: noindex" is for another agent; "unavailable_after: date"
		// is a directive with a value. Neither concerns us.
		if strings.Contains(part, ":") {
			continue
		}
		ni, nf := robotsDirectives(part)
		noindex, nofollow = noindex || ni, nofollow || nf
	}
	return noindex, nofollow
}

func robotsDirectives(content string) (noindex, nofollow bool) {
	for _, f := range strings.FieldsFunc(strings.ToLower(content), func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		switch f {
		case "noindex":
			noindex = true
		case "nofollow":
			nofollow = true
		case "none":
			noindex, nofollow = true, true
		}
	}
	return noindex, nofollow
}

// primaryLang turns "en-US", "zh_CN" or "EN" into "en".
func primaryLang(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "-_,; "); i >= 0 {
		s = s[:i]
	}
	s = strings.ToLower(s)
	if len(s) < 2 || len(s) > 3 || s == "utf" {
		return ""
	}
	for _, c := range s {
		if c < 'a' || c > 'z' {
			return ""
		}
	}
	return s
}

func hasToken(list, tok string) bool {
	for _, f := range strings.Fields(list) {
		if strings.EqualFold(f, tok) {
			return true
		}
	}
	return false
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key && a.Namespace == "" {
			return a.Val
		}
	}
	return ""
}

// linkText is collapseSpace(nodeText(n)) without the intermediate
// strings: the words of n's text, one space between them.
func linkText(n *html.Node) string {
	var b strings.Builder
	space := false
	word := func(s string) {
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteString(s)
	}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			s := n.Data
			for len(s) > 0 {
				if c := s[0]; c < utf8.RuneSelf {
					if asciiSpace(c) && c != 0 {
						space, s = true, s[1:]
						continue
					}
					j := 1
					for j < len(s) && s[j] < utf8.RuneSelf && (!asciiSpace(s[j]) || s[j] == 0) {
						j++
					}
					word(s[:j])
					s = s[j:]
					continue
				}
				r, size := utf8.DecodeRuneInString(s)
				if unicode.IsSpace(r) {
					space = true
				} else {
					word(s[:size]) // invalid bytes too, as strings.Fields keeps them
				}
				s = s[size:]
			}
		case html.ElementNode:
			switch n.Data {
			case "script", "style", "noscript", "template":
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func imgAlt(n *html.Node) string {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.Data == "img" {
			return attr(c, "alt")
		}
	}
	return ""
}

func collapseSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
