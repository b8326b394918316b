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
// For k <= 3 the rule is the fewest tables (the least space: each table is
// a copy of every fingerprint) such that each table returns at most
// MaxCandidatesPerTable candidates per query at the expected size, that is
// expected/2^p <= 256 for the table with the shortest prefix p; among
// layouts with as many tables, the longer prefix. It chooses among the
// built-in layouts, which gives 4x16 up to 2^24 (16.8M) fingerprints,
// 10x28 up to 2^32 (4.3G) and google16 beyond.
//
// For k > 3 (a judge's candidate radius) it chooses, among the layouts of
// at most maxWideTables tables (2.5 times 4x16's space) that answer k,
// whether by one prefix per table (NewLayout's for k) or by multi-probe
// (4x16, 10x28 and NewLayout's for a smaller K whose MaxK reaches k), the
// one whose query costs least by QueryCost: rangeCandidates per prefix
// range plus one per candidate; ties go to fewer tables. With the crawler's
// k = 7 that is 4x16 from about 500,000 up to 220M fingerprints (68
// ranges, 10,376 candidates at 10M), then k2/22-21-21/lead1 (3 tables, 718
// ranges); below, k7/8-8-8-8-8-8-8-8/lead1 (8 tables, one 8-bit prefix
// each). Without multi-probe k = 7 takes 8 tables of 8-bit prefixes or
// more than 10 tables (the rule below gave 36 at 10M). Only where no
// layout of at most 10 tables answers k does the k <= 3 rule apply, among
// NewLayout's layouts for k of at most 64 tables; if none keeps the
// candidates under the bound, the one with the fewest candidates per
// table.
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
		l, ok, err := chooseWide(k, expected)
		if err != nil || ok {
			return l, err
		}
		if cands, err = generatedLayouts(k, maxChosenTables); err != nil {
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

// maxWideTables bounds the tables of the layouts ChooseLayout weighs for
// k > 3 by their query cost: 10, 2.5 times 4x16's entries (issue 17's
// space budget for a wider radius).
const maxWideTables = 10

// rangeCandidates is what ChooseLayout counts a prefix range as, in
// candidates compared: a range costs a directory or B-tree look-up, then
// its candidates a popcount each (and decoding in bbolt). Measured on
// 4x16 (doc.go): in bbolt a range costs about 1.5 us and a candidate
// 5 ns, about 300 candidates; in memory about 0.15 us and 2 ns, about 75.
// 256 keeps the two on the side of the crawler's index, bbolt.
const rangeCandidates = 256

// chooseWide returns, for k > 3, the layout of at most maxWideTables tables
// answering k (MaxK >= k) with the least estimated query cost at n
// fingerprints, and false if there is none.
func chooseWide(k int, n int64) (Layout, bool, error) {
	var cands []Layout
	for _, name := range []string{Layout4x16, Layout10x28} {
		l, err := LayoutByName(name)
		if err != nil {
			return Layout{}, false, err
		}
		cands = append(cands, l)
	}
	for kk := k; kk >= 0; kk-- {
		ls, err := generatedLayouts(kk, maxWideTables)
		if err != nil {
			return Layout{}, false, err
		}
		cands = append(cands, ls...)
	}
	cost := func(l Layout) float64 {
		ranges, candidates := l.QueryCost(n, k)
		return float64(ranges)*rangeCandidates + candidates
	}
	var best Layout
	var bestCost float64
	for _, l := range cands {
		if l.Tables() > maxWideTables || l.MaxK() < k {
			continue
		}
		// Built-ins come first and keep their names against the same
		// tables generated under another K: only a lower cost, or as low
		// with fewer tables, replaces the best.
		if c := cost(l); !best.valid() || c < bestCost || c == bestCost && l.Tables() < best.Tables() {
			best, bestCost = l, c
		}
	}
	return best, best.valid(), nil
}

// generatedLayouts returns, for every number of blocks from k+1 to 64 and
// every lead that keeps the tables at most maxTables, the layout
// NewLayout makes of blocks of equal width (the first 64 mod n blocks one
// bit wider).
func generatedLayouts(k, maxTables int) ([]Layout, error) {
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
			if binomial(n, lead) > maxTables {
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
