package copyweb

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"golang.org/x/net/html"
)

// A TextPair is two extracted texts, as the crawler judges them, and
// whether the second is a copy of the first.
type TextPair struct {
	Kind Kind // the kind of copy, or SameTemplate or Rewrite for a pair to keep
	A, B string
	Copy bool
}

// ShortPairs builds pairs of short texts from the corpus articles for
// choosing the candidate radius of short texts: each article's first 40 to
// 600 words (80 to 1,200 characters of Chinese and other unspaced scripts),
// a paragraph a line, as extraction gives them, paired
//
//   - with copies that the web's copy kinds leave after extraction: an ad
//     line in the middle (Ads), a view counter and a date line on top
//     (Counters), a commenter's remark and the moderation notice after it
//     (Comments), 1-3% of the words edited (EditWords), one line removed
//     when it has five (DropParagraph), a source line (Repost);
//   - with texts to keep: another article's excerpt of about the same
//     length, both under one site's navigation and footer lines
//     (SameTemplate), and a 30-40% rewrite of it (Rewrite).
//
// Deterministic for a seed. perArticle excerpts are taken from each
// article, of independent random lengths.
func ShortPairs(sources []Source, seed uint64, perArticle int) []TextPair {
	rng := rand.New(rand.NewPCG(seed, 0x5407))
	type excerpt struct {
		lang  string
		paras []string
	}
	var arts []excerpt
	seen := &articleIndex{}
	for _, s := range sources {
		c, ok := candidateOf(s)
		if !ok || seen.seen(shingles(c.text)) {
			continue
		}
		p, err := parsePage(s.HTML)
		if err != nil || p.content == nil {
			continue
		}
		var paras []string
		for _, q := range p.paras {
			paras = append(paras, collapse(textOf(q)))
		}
		arts = append(arts, excerpt{c.lang, paras})
	}
	var out []TextPair
	for i, a := range arts {
		s := snippetSets[a.lang]
		if s == nil {
			s = snippetSets["en"]
		}
		other := arts[(i+1+rng.IntN(max(1, len(arts)-1)))%len(arts)]
		for range perArticle {
			spaced := spaced(strings.Join(a.paras, " "))
			size := 40 + rng.IntN(561)
			if !spaced {
				size = 80 + rng.IntN(1121)
			}
			lines := cut(a.paras, size, spaced)
			orig := strings.Join(lines, "\n")
			pair := func(k Kind, b []string, copy bool) {
				out = append(out, TextPair{Kind: k, A: orig, B: strings.Join(b, "\n"), Copy: copy})
			}
			mid := len(lines) / 2
			pair(Ads, insertLine(lines, mid, pick(rng, s.ads)), true)
			pair(Counters, insertLine(lines, 0, fmt.Sprintf(s.views, 100+rng.IntN(200000))+" · "+pick(rng, s.updated)), true)
			pair(Comments, append(append([]string(nil), lines...), pick(rng, s.people), pick(rng, s.remarks), s.moderated), true)
			if e, n := editLines(rng, lines, 0.01+0.02*rng.Float64(), 0.5); n > 0 {
				pair(EditWords, e, true)
			}
			if len(lines) >= 5 {
				j := 1 + rng.IntN(len(lines)-1)
				pair(DropParagraph, append(append([]string(nil), lines[:j]...), lines[j+1:]...), true)
			}
			pair(Repost, append(append([]string(nil), lines...), fmt.Sprintf(s.repost, "https://news.example.com/a/"+fmt.Sprint(i))), true)
			// The same template: one site's navigation and footer around
			// both articles.
			nav := strings.Join(s.nav, " ")
			b := cut(other.paras, size, spaced)
			out = append(out, TextPair{Kind: SameTemplate, A: nav + "\n" + orig + "\n" + s.footer,
				B: nav + "\n" + strings.Join(b, "\n") + "\n" + s.footer})
			if e, n := editLines(rng, lines, 0.30+0.10*rng.Float64(), 1); n > 0 {
				pair(Rewrite, e, false)
			}
		}
	}
	return out
}

// cut returns the paragraphs of paras up to size words (or characters
// when not spaced), the last one cut short.
func cut(paras []string, size int, spaced bool) []string {
	var out []string
	for _, p := range paras {
		if size <= 0 {
			break
		}
		if spaced {
			w := strings.Fields(p)
			w = w[:min(len(w), size)]
			size -= len(w)
			out = append(out, strings.Join(w, " "))
			continue
		}
		r := []rune(p)
		r = r[:min(len(r), size)]
		size -= len(r)
		out = append(out, string(r))
	}
	return out
}

func insertLine(lines []string, at int, l string) []string {
	out := append([]string(nil), lines[:at]...)
	out = append(out, l)
	return append(out, lines[at:]...)
}

// editLines is editWords on lines of text: the lines and the number of
// edits.
func editLines(rng *rand.Rand, lines []string, share, newWords float64) ([]string, int) {
	nodes := make([]*html.Node, len(lines))
	for i, l := range lines {
		nodes[i] = text(l)
	}
	edits := editText(rng, nodes, strings.Join(lines, "\n"), share, newWords)
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = collapse(n.Data)
	}
	return out, edits
}
