// Package worddiff diffs two texts word by word, for `crawl dups show` and
// the web view's pair page. Texts are split into tokens that reassemble the
// text exactly (words, single CJK characters, punctuation, runs of white
// space); Diff returns the runs that turn one text into the other.
package worddiff

// The word diff is written by hand: the Go diff
// libraries at hand are line-based (github.com/pkg/diff) or
// character-based with a word mode bolted on (github.com/sergi/go-diff),
// and this is forty lines of textbook LCS. Texts are split into tokens that
// reassemble the text exactly (words, single CJK characters, punctuation,
// runs of white space). After trimming the common prefix and suffix, an
// LCS table over the tokens in between is built when it has at most
// maxDiffCells cells (8 MB); larger middles are diffed paragraph by
// paragraph first, and each changed pair of paragraph runs word by word
// when small enough, else shown as replaced. So the cost stays bounded
// however long or different the texts are.

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxDiffCells bounds the LCS table: 4M uint16 cells.
const maxDiffCells = 4 << 20

// Kind says where a run of tokens is: in both texts, only the first
// (removed) or only the second (added).
type Kind byte

const (
	Same Kind = '='
	Del  Kind = '-'
	Ins  Kind = '+'
)

// Run is a stretch of tokens with one Kind; joined, Toks give its text.
type Run struct {
	Kind Kind
	Toks []string
}

// Text is the run's tokens joined.
func (r Run) Text() string { return strings.Join(r.Toks, "") }

// Tokenize splits s into tokens whose concatenation is s.
func Tokenize(s string) []string {
	var toks []string
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		end := n
		switch {
		case unicode.IsSpace(r):
			end = runEnd(s, n, unicode.IsSpace)
		case isIdeograph(r):
			// one token per character: CJK text has no spaces
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			end = runEnd(s, n, func(r rune) bool {
				return !isIdeograph(r) && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || r == '\'' || r == '’')
			})
		}
		toks = append(toks, s[:end])
		s = s[end:]
	}
	return toks
}

func runEnd(s string, i int, in func(rune) bool) int {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !in(r) {
			break
		}
		i += n
	}
	return i
}

func isIdeograph(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
}

// Diff returns the runs that turn a into b.
func Diff(a, b string) []Run {
	return diffSeq(Tokenize(a), Tokenize(b), true)
}

// diffSeq diffs token sequences; byPara allows the paragraph fallback.
func diffSeq(a, b []string, byPara bool) []Run {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	var out []Run
	out = appendRun(out, Same, a[:p]...)
	ma, mb := a[p:len(a)-s], b[p:len(b)-s]
	switch {
	case len(ma)*len(mb) <= maxDiffCells:
		out = appendRuns(out, lcsDiff(ma, mb))
	case byPara:
		out = appendRuns(out, paraDiff(ma, mb))
	default:
		out = appendRun(out, Del, ma...)
		out = appendRun(out, Ins, mb...)
	}
	return appendRun(out, Same, a[len(a)-s:]...)
}

// lcsDiff is the textbook longest-common-subsequence diff; len(a)*len(b)
// <= maxDiffCells, so the LCS (at most min(len) <= 2048) fits in uint16.
func lcsDiff(a, b []string) []Run {
	n, m := len(a), len(b)
	w := m + 1
	l := make([]uint16, (n+1)*w) // l[i*w+j] = LCS of a[i:], b[j:]
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				l[i*w+j] = l[(i+1)*w+j+1] + 1
			} else {
				l[i*w+j] = max(l[(i+1)*w+j], l[i*w+j+1])
			}
		}
	}
	var out []Run
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			out = appendRun(out, Same, a[i])
			i, j = i+1, j+1
		case l[(i+1)*w+j] >= l[i*w+j+1]:
			out = appendRun(out, Del, a[i])
			i++
		default:
			out = appendRun(out, Ins, b[j])
			j++
		}
	}
	out = appendRun(out, Del, a[i:]...)
	return appendRun(out, Ins, b[j:]...)
}

// paraDiff diffs paragraphs (token runs ending in white space holding a
// newline), then each replaced stretch word by word.
func paraDiff(a, b []string) []Run {
	pa, pb := paragraphs(a), paragraphs(b)
	if len(pa)*len(pb) > maxDiffCells {
		return []Run{{Del, a}, {Ins, b}}
	}
	var out []Run
	var del, ins []string
	flush := func() {
		out = appendRuns(out, diffSeq(del, ins, false))
		del, ins = nil, nil
	}
	for _, r := range lcsDiff(pa, pb) {
		toks := Tokenize(strings.Join(r.Toks, ""))
		switch r.Kind {
		case Del:
			del = append(del, toks...)
		case Ins:
			ins = append(ins, toks...)
		default:
			flush()
			out = appendRun(out, Same, toks...)
		}
	}
	flush()
	return out
}

func paragraphs(toks []string) []string {
	var paras []string
	var b strings.Builder
	for _, t := range toks {
		b.WriteString(t)
		if strings.Contains(t, "\n") {
			paras = append(paras, b.String())
			b.Reset()
		}
	}
	if b.Len() > 0 {
		paras = append(paras, b.String())
	}
	return paras
}

// appendRun appends toks as kind, merging with the last run of that kind.
func appendRun(out []Run, kind Kind, toks ...string) []Run {
	if len(toks) == 0 {
		return out
	}
	if n := len(out); n > 0 && out[n-1].Kind == kind {
		out[n-1].Toks = append(out[n-1].Toks, toks...)
		return out
	}
	return append(out, Run{kind, append([]string(nil), toks...)})
}

func appendRuns(out, runs []Run) []Run {
	for _, r := range runs {
		out = appendRun(out, r.Kind, r.Toks...)
	}
	return out
}

// Words counts the word tokens (not white space or punctuation) in
// each kind of run.
func Words(runs []Run) (same, del, ins int) {
	for _, r := range runs {
		n := 0
		for _, t := range r.Toks {
			if r, _ := utf8.DecodeRuneInString(t); unicode.IsLetter(r) || unicode.IsDigit(r) {
				n++
			}
		}
		switch r.Kind {
		case Same:
			same += n
		case Del:
			del += n
		default:
			ins += n
		}
	}
	return same, del, ins
}

// ANSI colours for a terminal.
const (
	ANSIRed   = "\x1b[31m"
	ANSIGreen = "\x1b[32m"
	ANSIReset = "\x1b[0m"
)

// Write prints runs inline: on a terminal removed text in red and
// added text in green, otherwise as [-removed-] and {+added+} (wdiff's
// notation). White space at the edge of a changed run is printed outside
// the markers, so that markers hug the words. Write errors are left to the
// caller's buffered writer (its Flush reports them).
func Write(w io.Writer, runs []Run, color bool) {
	var b strings.Builder
	for i, r := range runs {
		text := strings.Join(r.Toks, "")
		if r.Kind == Same {
			b.WriteString(text)
			continue
		}
		core := strings.TrimSpace(text)
		if core == "" {
			// Only white space changed: print the new spacing, or the
			// old one when nothing replaces it.
			if r.Kind == Ins || i+1 == len(runs) || runs[i+1].Kind != Ins {
				b.WriteString(text)
			}
			continue
		}
		lead := text[:strings.Index(text, core)]
		trail := text[len(lead)+len(core):]
		b.WriteString(lead)
		switch {
		case color && r.Kind == Del:
			b.WriteString(ANSIRed + core + ANSIReset)
		case color:
			b.WriteString(ANSIGreen + core + ANSIReset)
		case r.Kind == Del:
			b.WriteString("[-" + core + "-]")
		default:
			b.WriteString("{+" + core + "+}")
		}
		b.WriteString(trail)
	}
	fmt.Fprintln(w, b.String())
}
