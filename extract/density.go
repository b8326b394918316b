package extract

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// A second, independent article finder, after the text-density idea of
// CETD and jusText: paragraphs are good (long, few links) or bad (short or
// mostly links), and the article is the element whose good text most
// outweighs its bad text. Readability votes on a few container classes
// and paragraph counts and sometimes picks a list inside the article (the
// signatories under an open letter) or a teaser box; this finder does not
// look at classes at all, so the two fail on different pages, and the
// longer prose wins (see pickArticle).

// paraTags are the elements read as one paragraph each when nothing
// paragraph-like is below them.
var paraTags = setOf("p li td th dd dt blockquote pre h1 h2 h3 h4 h5 h6 figcaption address")

// goodRun is the text (non-space bytes) a paragraph needs to be good.
const goodRun = 80

// densityArticle returns the element below root whose good paragraph text
// most outweighs its bad text, or nil when there is no good paragraph.
func densityArticle(root *html.Node) *html.Node {
	var best *html.Node
	bestScore := 0
	type acc struct {
		good, bad int
		link      int  // text in links, of good+bad
		para      bool // a paragraph element is below
	}
	// One walk: a paragraph's text (good+bad) and link text come up with
	// its children's sums instead of two more walks of its subtree.
	var walk func(n *html.Node, inLink bool) acc
	walk = func(n *html.Node, inLink bool) acc {
		switch n.Type {
		case html.TextNode:
			k := textLen(n)
			switch {
			case inLink:
				return acc{bad: k, link: k}
			case k >= goodRun:
				return acc{good: k}
			}
			return acc{bad: k}
		case html.ElementNode:
			if dropTags[n.Data] {
				return acc{}
			}
		case html.DocumentNode:
		default:
			return acc{}
		}
		inLink = inLink || n.Data == "a"
		var a acc
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			ca := walk(c, inLink)
			a.good, a.bad, a.link, a.para = a.good+ca.good, a.bad+ca.bad, a.link+ca.link, a.para || ca.para
		}
		if paraTags[n.Data] && !a.para {
			// A paragraph is good as a whole when it is long and has
			// few links, whatever its text runs are.
			if t := a.good + a.bad; t >= goodRun && 10*a.link < 3*t {
				a = acc{good: t, link: a.link, para: true}
			} else {
				a = acc{bad: t, link: a.link, para: true}
			}
		}
		if n.Type == html.ElementNode {
			if s := a.good - a.bad/2; s > bestScore {
				best, bestScore = n, s
			}
		}
		return a
	}
	walk(root, false)
	return best
}

// proseBytes counts the bytes of the lines of text long enough to be
// paragraphs (goodRun bytes or more): what an article has and a list of
// names, headlines or links has not.
func proseBytes(text string) int {
	k := 0
	for line := range strings.SplitSeq(text, "\n") {
		if len(line) >= goodRun && utf8.RuneCountInString(line) >= goodRun/3 {
			k += len(line)
		}
	}
	return k
}

// maxReadabilityProse is the prose readability's article may have for the
// density finder to be asked at all: with more, readability found an
// article, and a larger container would add teasers and comments.
const maxReadabilityProse = 1000

// pickArticle chooses between readability's article text and the density
// finder's: the density text wins only when readability's has little prose
// and the density text plainly more, at least twice as much and a few
// paragraphs more. Otherwise readability,
// which keeps headings, lists and tables inside the article, is kept.
// The density text is asked for only when readability's has little prose.
func pickArticle(readability string, density func() string) (string, bool) {
	if pr := proseBytes(readability); pr < maxReadabilityProse {
		if d := density(); proseBytes(d) > 2*pr+400 {
			return d, true
		}
	}
	return readability, false
}
