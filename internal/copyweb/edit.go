package copyweb

import (
	"math/rand/v2"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// wordsPerHan converts a share of words to a share of Han characters:
// segmented Chinese averages about 1.7 characters a word.
const wordsPerHan = 1.7

// editWords changes about share of the words of the article's paragraphs:
// a word is deleted or replaced, with newWords of the replacements a word
// the article does not have (fillerWords) and the rest another word of the
// article. Text without spaces is edited a character at a time
// (fillerHan), as are Japanese and Thai. It returns the number of edits.
func (p *page) editWords(rng *rand.Rand, share, newWords float64) int {
	var nodes []*html.Node
	for _, q := range p.paras {
		nodes = append(nodes, textNodes(q)...)
	}
	return editText(rng, nodes, p.paraText(), share, newWords)
}

// rewrite changes about share of the words of the page's prose, wherever
// it is: the article's paragraphs and every other text of proseRunes or
// more characters in the body. Our article heuristic can take another
// block for the article (an inline gallery's captions outweigh the story
// on readability/bug-1255978), and a rewrite of that block alone left the
// text extraction keeps unchanged: a "rewrite" that was the same article.
// Short texts (navigation, labels) stay: the rewrite keeps its template.
func (p *page) rewrite(rng *rand.Rand, share float64) int {
	var nodes []*html.Node
	in := map[*html.Node]bool{}
	for _, q := range p.paras {
		for _, n := range textNodes(q) {
			nodes, in[n] = append(nodes, n), true
		}
	}
	body := find(p.root, atom.Body)
	if body == nil {
		body = p.root
	}
	for _, n := range textNodes(body) {
		if !in[n] && utf8.RuneCountInString(collapse(n.Data)) >= proseRunes {
			nodes = append(nodes, n)
		}
	}
	var all strings.Builder
	for _, n := range nodes {
		all.WriteString(n.Data)
		all.WriteByte('\n')
	}
	return editText(rng, nodes, all.String(), share, 1)
}

// proseRunes is the length from which rewrite takes a text outside the
// article's paragraphs for prose.
const proseRunes = 20

// editText edits nodes as editWords says; all is their text.
func editText(rng *rand.Rand, nodes []*html.Node, all string, share, newWords float64) int {
	edits := 0
	if spaced(all) {
		vocab := strings.Fields(all)
		for _, n := range nodes {
			words := strings.Fields(n.Data)
			out := words[:0]
			for _, w := range words {
				if rng.Float64() >= share {
					out = append(out, w)
					continue
				}
				edits++
				switch {
				case rng.IntN(5) >= 3: // deleted
				case rng.Float64() < newWords:
					out = append(out, pick(rng, fillerWords))
				default:
					out = append(out, pick(rng, vocab))
				}
			}
			n.Data = " " + strings.Join(out, " ") + " "
		}
		return edits
	}
	var han []rune
	for _, r := range all {
		if unspacedLetter(r) {
			han = append(han, r)
		}
	}
	if len(han) == 0 {
		return 0
	}
	share /= wordsPerHan
	for _, n := range nodes {
		var b strings.Builder
		for _, r := range n.Data {
			if !unspacedLetter(r) || rng.Float64() >= share {
				b.WriteRune(r)
				continue
			}
			edits++
			switch {
			case rng.IntN(5) >= 3: // deleted
			case rng.Float64() < newWords:
				b.WriteRune(pick(rng, fillerHan))
			default:
				b.WriteRune(pick(rng, han))
			}
		}
		n.Data = b.String()
	}
	return edits
}

// dropParagraph removes one paragraph, not the first, holding at most
// 15% of the article's text. It reports false when the article has fewer
// than five paragraphs or none that short.
func (p *page) dropParagraph(rng *rand.Rand) bool {
	if len(p.paras) < 5 {
		return false
	}
	total := len([]rune(collapse(textOf(p.content))))
	var cands []*html.Node
	for _, q := range p.paras[1:] {
		if l := len([]rune(collapse(textOf(q)))); l*100 <= 15*total {
			cands = append(cands, q)
		}
	}
	if len(cands) == 0 {
		return false
	}
	detach(cands[rng.IntN(len(cands))])
	return true
}

// retitle sets the page's <title>, its first <h1> and its og:title to t.
func (p *page) retitle(t string) {
	head := find(p.root, atom.Head)
	if tn := find(p.root, atom.Title); tn != nil {
		for tn.FirstChild != nil {
			tn.RemoveChild(tn.FirstChild)
		}
		tn.AppendChild(text(t))
	} else if head != nil {
		head.AppendChild(el("title", nil, text(t)))
	}
	if h1 := find(p.root, atom.Body); h1 != nil {
		if h := find(h1, atom.H1); h != nil {
			for h.FirstChild != nil {
				h.RemoveChild(h.FirstChild)
			}
			h.AppendChild(text(t))
		}
	}
	walk(p.root, func(n *html.Node) bool {
		if n.DataAtom == atom.Meta {
			for _, a := range n.Attr {
				if a.Key == "property" && a.Val == "og:title" || a.Key == "name" && a.Val == "twitter:title" {
					setAttr(n, "content", t)
				}
			}
		}
		return true
	})
}

// title returns the page's <title> text, or its first <h1>.
func (p *page) title() string {
	if tn := find(p.root, atom.Title); tn != nil {
		if t := collapse(textOf(tn)); t != "" {
			return t
		}
	}
	if h := find(p.root, atom.H1); h != nil {
		return collapse(textOf(h))
	}
	return ""
}

func setAttr(n *html.Node, key, val string) {
	for i := range n.Attr {
		if n.Attr[i].Key == key {
			n.Attr[i].Val = val
			return
		}
	}
	n.Attr = append(n.Attr, html.Attribute{Key: key, Val: val})
}

// convertText replaces every text node of the document (title included)
// by conv of it.
func (p *page) convertText(conv func(string) (string, error)) error {
	var err error
	walk(p.root, func(n *html.Node) bool {
		if err != nil || skipped(n) {
			return false
		}
		if n.Type == html.TextNode && strings.TrimSpace(n.Data) != "" {
			n.Data, err = conv(n.Data)
		}
		return true
	})
	return err
}
