package extract

import (
	"net/url"
	"strings"
	"unicode/utf8"

	readability "codeberg.org/readeck/go-readability/v2"
	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
)

// maxElems is the element count above which readability is skipped and the
// visible-text fallback used: readability's scoring is superlinear on huge
// trees, the fallback is one linear walk.
const maxElems = 60000

// maxReadabilityText is the page text size above which readability is
// skipped: it measures text lengths of nested nodes again and again, which
// costs seconds on a page of many megabytes, and no article is that long.
const maxReadabilityText = 2 << 20

// minArticleRunes is the article length below which the page's visible
// text is considered instead.
const minArticleRunes = 200

// extractTree fills d from a parsed page.
func extractTree(d *Document, g *goquery.Document, pageURL *url.URL) {
	root := g.Nodes[0]
	readMeta(d, g, pageURL) // before anything mutates the tree
	total := clean(root, false)

	body := g.Find("body").Nodes
	fbRoot := root
	if len(body) > 0 {
		fbRoot = body[0]
	}
	dense := linkDense(fbRoot)
	skip := func(n *html.Node) bool { return dense(n) || caption(n) }
	fallback := renderText(fbRoot, skip)
	// The density finder's article, rendered before readability mutates
	// the tree.
	var densityText string
	if a := densityArticle(fbRoot); a != nil {
		densityText = renderText(a, skip)
	}
	if utf8.RuneCountInString(fallback) < minArticleRunes {
		// On a page that is mostly links (an index, an archive) the
		// links are the content.
		fallback = renderText(fbRoot, nil)
	}

	var text string
	if total <= maxReadabilityText && countElems(root, maxElems) <= maxElems {
		text = readabilityText(root, pageURL, d)
	}
	if useFallback(text, fallback) {
		d.Text, d.Fallback = dropBoilerLines(fallback), true
		return
	}
	if picked, ok := pickArticle(text, densityText); ok {
		text = picked
	}
	d.Text = dropBoilerLines(text)
}

// readabilityText runs readability on root (mutating it) and renders the
// article it finds, cleaned once more; "" when it finds none.
func readabilityText(root *html.Node, pageURL *url.URL, d *Document) string {
	p := readability.NewParser()
	p.KeepClasses = true // our second cleaning pass matches on classes
	p.DisableJSONLD = true
	art, err := p.ParseAndMutate(root, pageURL)
	if err != nil || art.Node == nil {
		return ""
	}
	if d.Title == "" {
		d.Title = collapseSpace(art.Title())
	}
	if d.Lang == "" {
		d.Lang = primaryLang(art.Language())
	}
	clean(art.Node, true)
	return renderText(art.Node, linkDense(art.Node))
}

// useFallback decides between readability's article and the page's
// visible text. Readability always returns its best candidate, even on
// index pages where that is one small box of headlines; when the article
// is short, has no real paragraph, and the page has much more text, the
// page text describes the page better. A short article with a paragraph
// (a two-sentence news item) is kept: the rest of such a page is login
// boxes and disclaimers, which would make every short item on the site
// look alike.
func useFallback(article, fallback string) bool {
	a := utf8.RuneCountInString(article)
	if a == 0 {
		return true
	}
	if a >= minArticleRunes || hasParagraph(article) {
		return false
	}
	return utf8.RuneCountInString(fallback) > 3*a
}

// hasParagraph reports whether some line of text is a paragraph rather
// than a headline: about 25 words, counting a Han or kana character as a
// word and five other letters as one.
func hasParagraph(text string) bool {
	for line := range strings.SplitSeq(text, "\n") {
		w := 0
		for _, r := range line {
			switch {
			case r >= 0x3040 && r <= 0x30FF, r >= 0x3400 && r <= 0x9FFF:
				w += 5
			case r > ' ':
				w++
			}
		}
		if w >= 125 {
			return true
		}
	}
	return false
}

// countElems counts elements below n, stopping early past limit.
func countElems(n *html.Node, limit int) int {
	k := 0
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil && k <= limit; c = c.NextSibling {
			if c.Type == html.ElementNode {
				k++
			}
			walk(c)
		}
	}
	walk(n)
	return k
}
