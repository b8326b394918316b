package copyweb

import (
	"hash/fnv"
	"strings"
	"unicode"
)

// The corpus holds a few pages that are themselves copies of each other
// (one article saved twice, with and without its comments). They would be
// "different articles" in the ground truth, so the generator leaves out a
// page most of whose shingles one page already taken has: our own measure,
// independent of the crawler's.
const (
	shingleWords = 5   // words per shingle in text with spaces
	shingleHan   = 6   // characters per shingle in text without
	sameArticle  = 0.5 // containment above which two corpus pages are one article
)

// shingles returns the hashed shingles of text, lower-cased, as a set.
func shingles(text string) map[uint64]bool {
	var toks []string
	n := shingleWords
	if spaced(text) {
		toks = strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
	} else {
		for _, r := range text {
			if unicode.IsLetter(r) || unicode.IsNumber(r) {
				toks = append(toks, string(r))
			}
		}
		n = shingleHan
	}
	out := map[uint64]bool{}
	for i := 0; i+n <= len(toks); i++ {
		h := fnv.New64a()
		for _, t := range toks[i : i+n] {
			h.Write([]byte(t))
			h.Write([]byte{0})
		}
		out[h.Sum64()] = true
	}
	return out
}

// articleIndex knows the shingles of the corpus pages taken so far.
type articleIndex struct {
	owners map[uint64][]int // shingle -> pages having it
	n      int
}

// seen reports whether the page with shingles sh is mostly one page
// already added; if not, it adds it.
func (ix *articleIndex) seen(sh map[uint64]bool) bool {
	if ix.owners == nil {
		ix.owners = map[uint64][]int{}
	}
	common := map[int]int{}
	for s := range sh {
		for _, p := range ix.owners[s] {
			common[p]++
		}
	}
	for _, c := range common {
		if float64(c) > sameArticle*float64(len(sh)) {
			return true
		}
	}
	for s := range sh {
		ix.owners[s] = append(ix.owners[s], ix.n)
	}
	ix.n++
	return false
}
