package main

import "strings"

// suggest returns the candidate a mistyped word most likely meant, or "".
//
// A candidate whose last dotted part is the word's wins outright (max_pages
// or scope.delay for scope.max_pages or fetch.delay). Otherwise the closest candidate by optimal string
// alignment distance (edits, with a swap of two neighbouring letters one
// edit: "dealy" is one from "delay") within a third of the word's length,
// at least 1 and at most 3; the first of equally close candidates wins, so
// callers list the likelier ones first.
func suggest(typed string, candidates []string) string {
	word := strings.ToLower(typed)
	if word == "" {
		return ""
	}
	leaf := func(s string) string { return s[strings.LastIndexByte(s, '.')+1:] }
	for _, c := range candidates {
		if c != typed && leaf(c) == leaf(word) {
			return c
		}
	}
	limit := min(max(len([]rune(word))/3, 1), 3)
	best, bestDist := "", limit+1
	for _, c := range candidates {
		if c == typed {
			continue
		}
		if d := editDistance(word, strings.ToLower(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b, in
// runes: insertions, deletions, substitutions and swaps of two adjacent
// runes each cost one.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	// Three rows of the dynamic programme: i-2, i-1 and i.
	prev2 := make([]int, len(y)+1)
	prev := make([]int, len(y)+1)
	cur := make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(y)]
}
