package extract

import (
	"log/slog"
	"net/url"
	"strings"
	"unicode/utf8"

	readability "codeberg.org/readeck/go-readability/v2"
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
func extractTree(d *Document, root *html.Node, pageURL *url.URL) {
	readMeta(d, root, pageURL) // before anything mutates the tree
	total := clean(root, false)

	fbRoot := root
	if body := firstElem(root, "body"); body != nil {
		fbRoot = body
	}
	useReadability := total <= maxReadabilityText && countElems(root, maxElems) <= maxElems
	dense := linkDense(fbRoot)
	skip := func(n *html.Node) bool { return dense(n) || caption(n) }
	fallback := lazyText{render: func() string {
		t := renderText(fbRoot, skip)
		if utf8.RuneCountInString(t) < minArticleRunes {
			// On a page that is mostly links (an index, an archive)
			// the links are the content.
			t = renderText(fbRoot, nil)
		}
		return t
	}}
	// The density finder's article only ever replaces readability's.
	var densityNode *html.Node
	if useReadability {
		densityNode = densityArticle(fbRoot)
	}
	density := lazyText{render: func() string {
		if densityNode == nil {
			return ""
		}
		return renderText(densityNode, skip)
	}}
	// The page text is needed when readability's article is short, the
	// density article when readability's has little prose: both are
	// rendered only then, after readability has run on this tree. What
	// readability changes in it does not change them (it turns <br><br>
	// runs into <p>, renames <font> to <span>, drops images without a
	// source, and comments and styles the cleaning dropped already),
	// except that it removes <noscript>, which the cleaning keeps when it
	// holds an article; with one left, both are rendered before.
	if firstElem(fbRoot, "noscript") != nil {
		fallback.get()
		density.get()
	}

	var text string
	if useReadability {
		text = readabilityText(root, pageURL, d)
	}
	if useFallback(text, fallback.get) {
		d.Text, d.Fallback = dropBoilerLines(fallback.get()), true
		return
	}
	if picked, ok := pickArticle(text, density.get); ok {
		text = picked
	}
	d.Text = dropBoilerLines(text)
}

// lazyText is a text rendered on first use.
type lazyText struct {
	render func() string
	text   string
	done   bool
}

func (l *lazyText) get() string {
	if !l.done {
		l.text, l.done = l.render(), true
	}
	return l.text
}

// readabilityText runs readability on root (mutating it) and renders the
// article it finds, cleaned once more; "" when it finds none.
func readabilityText(root *html.Node, pageURL *url.URL, d *Document) string {
	p := readability.NewParser()
	p.KeepClasses = true // our second cleaning pass matches on classes
	p.DisableJSONLD = true
	// NewParser's logger writes Info records to io.Discard, formatting
	// them first, and formats the attributes of every per-pass logger;
	// 2 % of the stage.
	p.Logger = slog.New(slog.DiscardHandler)
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
func useFallback(article string, fallback func() string) bool {
	a := utf8.RuneCountInString(article)
	if a == 0 {
		return true
	}
	if a >= minArticleRunes || hasParagraph(article) {
		return false
	}
	return utf8.RuneCountInString(fallback()) > 3*a
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

// firstElem returns the first element named name below n in document
// order, or nil.
func firstElem(n *html.Node, name string) *html.Node {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.Data == name {
			return c
		}
		if e := firstElem(c, name); e != nil {
			return e
		}
	}
	return nil
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
