package contentseen

import (
	"fmt"
	"math"
)

// MaxCandidatesPerTable is how many candidates ChooseLayout lets one table
// return per query, on average, at the expected size: 256, about one 4 KiB
// page of entries, read after the table's one seek. Below it a table's
// probe costs about its seek and more tables only cost space; above it the
// scan grows linearly with the index. Measured with BoltIndex (see the
// package doc): at 10M fingerprints 4x16 (153 candidates per table) still
// answers in about half the time of 10x28 (under 1 per table), whose ten
// seeks cost more than 4x16's four seeks and scans; at 100M 4x16 would
// scan 1,500 per table. A storage format that decodes candidates more
// slowly (compressed blocks) moves the best bound down.
const MaxCandidatesPerTable = 256

// maxChosenTables bounds the generated layouts ChooseLayout considers for
// k > 3: every table is a full copy of every fingerprint.
const maxChosenTables = 64

// ChooseLayout returns the layout for an index expected to hold about
// expected fingerprints and to find every match within k bits.
//
// The rule: the fewest tables (the least space: each table is a copy of
// every fingerprint) such that each table returns at most
// MaxCandidatesPerTable candidates per query at the expected size, that is
// expected/2^p <= 256 for the table with the shortest prefix p; among
// layouts with as many tables, the longer prefix. For k <= 3 it chooses
// among the built-in layouts, which gives 4x16 up to 2^24 (16.8M)
// fingerprints, 10x28 up to 2^32 (4.3G) and google16 beyond. For k > 3 it
// chooses among the layouts NewLayout generates from blocks of equal width
// (give or take a bit) with at most 64 tables; if none keeps the
// candidates under the bound, the one with the fewest candidates per table.
//
// A layout is fixed when an index is created; an index that outgrows its
// layout can be rebuilt with another (crawl index migrate).
func ChooseLayout(k int, expected int64) (Layout, error) {
	if k < 0 || k > 63 {
		return Layout{}, fmt.Errorf("contentseen: choose layout: k = %d, want 0..63", k)
	}
	if expected < 0 {
		return Layout{}, fmt.Errorf("contentseen: choose layout: expected = %d fingerprints, want >= 0", expected)
	}
	var cands []Layout
	if k <= 3 {
		for _, name := range []string{Layout4x16, Layout10x28, LayoutGoogle16} {
			l, err := LayoutByName(name)
			if err != nil {
				return Layout{}, err
			}
			cands = append(cands, l)
		}
	} else {
		var err error
		if cands, err = generatedLayouts(k); err != nil {
			return Layout{}, err
		}
	}
	fits := func(l Layout) bool { return l.Cost(expected).WorstTable <= MaxCandidatesPerTable }
	var best Layout
	for _, l := range cands {
		switch {
		case !best.valid():
			best = l
		case fits(l) && !fits(best):
			best = l
		case fits(l) && fits(best):
			if l.Tables() < best.Tables() || l.Tables() == best.Tables() && minPrefix(l) > minPrefix(best) {
				best = l
			}
		case !fits(l) && !fits(best):
			if minPrefix(l) > minPrefix(best) || minPrefix(l) == minPrefix(best) && l.Tables() < best.Tables() {
				best = l
			}
		}
	}
	if !best.valid() {
		return Layout{}, fmt.Errorf("contentseen: choose layout: no layout for k = %d", k)
	}
	return best, nil
}

// generatedLayouts returns, for every number of blocks from k+1 to 64 and
// every lead that keeps the tables at most maxChosenTables, the layout
// NewLayout makes of blocks of equal width (the first 64 mod n blocks one
// bit wider).
func generatedLayouts(k int) ([]Layout, error) {
	var out []Layout
	for n := k + 1; n <= 64; n++ {
		blocks := make([]int, n)
		for i := range blocks {
			blocks[i] = 64 / n
			if i < 64%n {
				blocks[i]++
			}
		}
		for lead := 1; lead <= n-k; lead++ {
			// C(n, lead) grows with lead up to n/2; past it, lead <= n-k
			// keeps it at least C(n, k), over 64 for k >= 4 and n > 2k.
			if binomial(n, lead) > maxChosenTables {
				break
			}
			l, err := NewLayout(k, blocks, lead)
			if err != nil {
				return nil, err
			}
			out = append(out, l)
		}
	}
	return out, nil
}

// binomial returns C(n, r), saturating at math.MaxInt.
func binomial(n, r int) int {
	c := 1
	for i := 1; i <= r; i++ {
		if c > math.MaxInt/n {
			return math.MaxInt
		}
		c = c * (n - r + i) / i
	}
	return c
}

func minPrefix(l Layout) int {
	p := 64
	for t := range l.Tables() {
		p = min(p, l.PrefixBits(t))
	}
	return p
}

// LayoutCost is what a layout costs with a number of random fingerprints
// stored; see Layout.Cost.
type LayoutCost struct {
	Tables int
	// MinPrefix and MaxPrefix are the shortest and longest prefix, in
	// bits, that a query matches exactly in one of the tables.
	MinPrefix, MaxPrefix int
	// Space is the table entries' size relative to 4x16's: Tables/4.
	Space float64
	// Candidates is the expected number of stored fingerprints a query
	// reads (and checks with XOR and popcount) in all tables:
	// the sum over tables of n/2^prefix.
	Candidates float64
	// WorstTable is the expected candidates of the table with the
	// shortest prefix, n/2^MinPrefix.
	WorstTable float64
}

// Cost returns the tables, prefix bits, relative space and the expected
// candidates per query of l with n random fingerprints stored. Real
// fingerprints cluster (near-duplicates share prefixes), so a query near a
// cluster reads more.
func (l Layout) Cost(n int64) LayoutCost {
	c := LayoutCost{Tables: l.Tables(), MinPrefix: 64, Space: float64(l.Tables()) / 4}
	for t := range l.Tables() {
		p := l.PrefixBits(t)
		c.MinPrefix, c.MaxPrefix = min(c.MinPrefix, p), max(c.MaxPrefix, p)
		c.Candidates += math.Ldexp(float64(n), -p)
	}
	c.WorstTable = math.Ldexp(float64(n), -c.MinPrefix)
	return c
}

// QueryCost returns what a query at distance k (0..MaxK) costs l with n
// random fingerprints stored: the prefix ranges it reads (one per table
// up to ProbeRadius(k) = 0, the prefixes within ProbeRadius(k) bits of
// its own beyond) and the expected candidates it compares, the sum over
// those ranges of n/2^prefix. Each range costs a directory or B-tree
// look-up, each candidate an XOR and popcount (decoding too in BoltIndex).
func (l Layout) QueryCost(n int64, k int) (ranges int, candidates float64) {
	e := l.ProbeRadius(k)
	for t := range l.Tables() {
		p := l.PrefixBits(t)
		r := probeCount(p, min(e, p))
		ranges += r
		candidates += float64(r) * math.Ldexp(float64(n), -p)
	}
	return ranges, candidates
}
