package main

// The word diff of `crawl dups show`, written by hand: the Go diff
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

// diffKind says where a run of tokens is: in both texts, only the first
// (removed) or only the second (added).
type diffKind byte

const (
	diffSame diffKind = '='
	diffDel  diffKind = '-'
	diffIns  diffKind = '+'
)

type diffRun struct {
	kind diffKind
	toks []string
}

// diffTokenize splits s into tokens whose concatenation is s.
func diffTokenize(s string) []string {
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

// wordDiff returns the runs that turn a into b.
func wordDiff(a, b string) []diffRun {
	return diffSeq(diffTokenize(a), diffTokenize(b), true)
}

// diffSeq diffs token sequences; byPara allows the paragraph fallback.
func diffSeq(a, b []string, byPara bool) []diffRun {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	var out []diffRun
	out = appendRun(out, diffSame, a[:p]...)
	ma, mb := a[p:len(a)-s], b[p:len(b)-s]
	switch {
	case len(ma)*len(mb) <= maxDiffCells:
		out = appendRuns(out, lcsDiff(ma, mb))
	case byPara:
		out = appendRuns(out, paraDiff(ma, mb))
	default:
		out = appendRun(out, diffDel, ma...)
		out = appendRun(out, diffIns, mb...)
	}
	return appendRun(out, diffSame, a[len(a)-s:]...)
}

// lcsDiff is the textbook longest-common-subsequence diff; len(a)*len(b)
// <= maxDiffCells, so the LCS (at most min(len) <= 2048) fits in uint16.
func lcsDiff(a, b []string) []diffRun {
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
	var out []diffRun
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			out = appendRun(out, diffSame, a[i])
			i, j = i+1, j+1
		case l[(i+1)*w+j] >= l[i*w+j+1]:
			out = appendRun(out, diffDel, a[i])
			i++
		default:
			out = appendRun(out, diffIns, b[j])
			j++
		}
	}
	out = appendRun(out, diffDel, a[i:]...)
	return appendRun(out, diffIns, b[j:]...)
}

// paraDiff diffs paragraphs (token runs ending in white space holding a
// newline), then each replaced stretch word by word.
func paraDiff(a, b []string) []diffRun {
	pa, pb := paragraphs(a), paragraphs(b)
	if len(pa)*len(pb) > maxDiffCells {
		return []diffRun{{diffDel, a}, {diffIns, b}}
	}
	var out []diffRun
	var del, ins []string
	flush := func() {
		out = appendRuns(out, diffSeq(del, ins, false))
		del, ins = nil, nil
	}
	for _, r := range lcsDiff(pa, pb) {
		toks := diffTokenize(strings.Join(r.toks, ""))
		switch r.kind {
		case diffDel:
			del = append(del, toks...)
		case diffIns:
			ins = append(ins, toks...)
		default:
			flush()
			out = appendRun(out, diffSame, toks...)
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
func appendRun(out []diffRun, kind diffKind, toks ...string) []diffRun {
	if len(toks) == 0 {
		return out
	}
	if n := len(out); n > 0 && out[n-1].kind == kind {
		out[n-1].toks = append(out[n-1].toks, toks...)
		return out
	}
	return append(out, diffRun{kind, append([]string(nil), toks...)})
}

func appendRuns(out, runs []diffRun) []diffRun {
	for _, r := range runs {
		out = appendRun(out, r.kind, r.toks...)
	}
	return out
}

// diffWords counts the word tokens (not white space or punctuation) in
// each kind of run.
func diffWords(runs []diffRun) (same, del, ins int) {
	for _, r := range runs {
		n := 0
		for _, t := range r.toks {
			if r, _ := utf8.DecodeRuneInString(t); unicode.IsLetter(r) || unicode.IsDigit(r) {
				n++
			}
		}
		switch r.kind {
		case diffSame:
			same += n
		case diffDel:
			del += n
		default:
			ins += n
		}
	}
	return same, del, ins
}

// ANSI colours for a terminal.
const (
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
	ansiReset = "\x1b[0m"
)

// writeDiff prints runs inline: on a terminal removed text in red and
// added text in green, otherwise as [-removed-] and {+added+} (wdiff's
// notation). White space at the edge of a changed run is printed outside
// the markers, so that markers hug the words. Write errors are left to the
// caller's buffered writer (its Flush reports them).
func writeDiff(w io.Writer, runs []diffRun, color bool) {
	var b strings.Builder
	for i, r := range runs {
		text := strings.Join(r.toks, "")
		if r.kind == diffSame {
			b.WriteString(text)
			continue
		}
		core := strings.TrimSpace(text)
		if core == "" {
			// Only white space changed: print the new spacing, or the
			// old one when nothing replaces it.
			if r.kind == diffIns || i+1 == len(runs) || runs[i+1].kind != diffIns {
				b.WriteString(text)
			}
			continue
		}
		lead := text[:strings.Index(text, core)]
		trail := text[len(lead)+len(core):]
		b.WriteString(lead)
		switch {
		case color && r.kind == diffDel:
			b.WriteString(ansiRed + core + ansiReset)
		case color:
			b.WriteString(ansiGreen + core + ansiReset)
		case r.kind == diffDel:
			b.WriteString("[-" + core + "-]")
		default:
			b.WriteString("{+" + core + "+}")
		}
		b.WriteString(trail)
	}
	fmt.Fprintln(w, b.String())
}
