package contentseen

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// A Layout says how an index finds every stored fingerprint within K bits
// of a query without scanning them all (Manku, Jain and Das Sarma,
// "Detecting near-duplicates for web crawling", WWW 2007).
//
// The 64 bits are split into blocks. Two fingerprints within K bits differ
// in at most K blocks, so at least len(blocks)-K blocks agree exactly
// (pigeonhole). Each table stores every fingerprint with its bits permuted
// so that one choice of blocks leads; if the tables cover every choice of
// `lead` blocks and lead <= len(blocks)-K, some table holds every match
// under the query's own prefix. A query therefore probes one prefix range
// per table and checks each candidate with XOR and popcount (a permutation
// of bits does not change the Hamming distance, so candidates are compared
// in permuted form).
//
// Cost: Tables() copies of every fingerprint; with N stored fingerprints a
// table with p prefix bits yields about N/2^p candidates per query.
//
// A Layout is an immutable value, safe for concurrent use.
type Layout struct {
	name   string
	k      int
	tables []table
	// blocks and lead of a layout made by NewLayout (nil for google16):
	// they give the multi-probe radius of a query (probeRadius).
	blocks []int
	lead   int
	maxK   int // see MaxK
}

// table is one permutation: segments of the original fingerprint, placed
// from the most significant bit of the permuted key downwards.
type table struct {
	segs   []segment
	prefix int // leading bits of the permuted key that must match the query's
}

// segment moves width bits starting at bit src (counted from the least
// significant bit) of the fingerprint to bit dst of the permuted key.
type segment struct {
	src, dst, width int
	mask            uint64 // width low bits set
}

// Layout names accepted by LayoutByName besides the generated form.
const (
	Layout4x16     = "4x16"     // 4 tables, 16-bit prefix, k=3 (default)
	Layout10x28    = "10x28"    // 10 tables, 24- or 28-bit prefix, k=3
	LayoutGoogle16 = "google16" // 16 tables, 28-bit prefix, k=3
)

// DefaultLayout returns the "4x16" layout: 4 blocks of 16 bits, each table
// led by one block, k=3. It is the cheapest in space and fine up to about
// 10M fingerprints; beyond, its 16-bit prefix returns N/65536 candidates
// per table.
func DefaultLayout() Layout {
	l, err := LayoutByName(Layout4x16)
	if err != nil {
		panic(err) // the built-in layout is valid; covered by tests
	}
	return l
}

// NewLayout derives the tables for distance k from a split of the 64 bits
// into blocks (widths from the most significant bit, summing to 64): one
// table for every choice of lead blocks, those blocks leading in their
// original order and the rest following.
//
// When lead <= len(blocks)-k, some table's lead blocks agree exactly with
// any match and a query reads one prefix per table. A larger k (a wider
// radius on few tables) makes a multi-probe layout: the k differing bits
// put at most e of them in some table's lead blocks (e = ProbeRadius(k),
// the largest sum of the lead smallest of k bits spread over the blocks),
// so a query reads, in every table, each prefix within e bits of its own
// (sum of C(prefix, i) for i <= e). NewLayout refuses a layout whose
// queries would read more than 4,096 prefixes per table.
//
// The layout's name is "k<k>/<w1>-<w2>-.../lead<lead>"; LayoutByName
// accepts it, so an index can record the name and rebuild the layout.
func NewLayout(k int, blocks []int, lead int) (Layout, error) {
	name := fmt.Sprintf("k%d/%s/lead%d", k, joinInts(blocks, "-"), lead)
	if k < 0 || k > 63 {
		return Layout{}, fmt.Errorf("contentseen: layout %s: k must be in 0..63", name)
	}
	sum := 0
	for _, w := range blocks {
		if w <= 0 {
			return Layout{}, fmt.Errorf("contentseen: layout %s: block widths must be positive", name)
		}
		sum += w
	}
	if sum != 64 {
		return Layout{}, fmt.Errorf("contentseen: layout %s: block widths sum to %d, want 64", name, sum)
	}
	if lead < 1 || lead > len(blocks) {
		return Layout{}, fmt.Errorf("contentseen: layout %s: lead must be in 1..%d (the blocks)", name, len(blocks))
	}
	// Bit ranges of the blocks, as (src, width) from the most significant bit.
	ranges := make([][2]int, len(blocks))
	hi := 64
	for i, w := range blocks {
		hi -= w
		ranges[i] = [2]int{hi, w}
	}
	l := Layout{name: name, k: k, blocks: append([]int(nil), blocks...), lead: lead}
	for _, pick := range combinations(len(blocks), lead) {
		var order [][2]int
		chosen := make([]bool, len(blocks))
		prefix := 0
		for _, b := range pick {
			chosen[b] = true
			order = append(order, ranges[b])
			prefix += ranges[b][1]
		}
		for b := range blocks {
			if !chosen[b] {
				order = append(order, ranges[b])
			}
		}
		l.tables = append(l.tables, newTable(order, prefix))
	}
	l.maxK = l.computeMaxK()
	if e := l.ProbeRadius(k); e > 0 {
		for t := range l.tables {
			if n := probeCount(l.tables[t].prefix, e); n > maxProbes {
				return Layout{}, fmt.Errorf("contentseen: layout %s: a query at distance %d would read %d prefixes per table "+
					"(up to %d bits differ among %d lead bits), more than %d: use more or longer lead blocks",
					name, k, n, e, l.tables[t].prefix, maxProbes)
			}
		}
	}
	return l, nil
}

// maxProbes bounds the prefixes a multi-probe query reads per table.
const maxProbes = 4096

// ProbeRadius returns e, how many bits of its lead blocks a match within k
// may differ in, in the table where they differ least: a query at distance
// k reads every prefix within e bits of its own in every table. It is 0
// when k <= len(blocks)-lead (one prefix per table), and for the built-in
// layouts at any k <= K.
//
// The k differing bits spread over B blocks as evenly as they can (q or
// q+1 per block, q = k/B) give the largest sum of the lead smallest, which
// is e; spreading them unevenly only lowers it.
func (l Layout) ProbeRadius(k int) int {
	if l.blocks == nil || k <= 0 {
		return 0
	}
	b := len(l.blocks)
	q, rem := k/b, k%b
	return l.lead*q + max(0, l.lead-(b-rem))
}

// probeCount returns the prefixes within e bits of one of p bits: the sum
// of C(p, i) for i <= e.
func probeCount(p, e int) int {
	n, c := 0, 1
	for i := 0; i <= e && i <= p && n <= maxProbes; i++ {
		n += c
		c = c * (p - i) / (i + 1)
	}
	return n
}

// ProbeMasks returns the masks to XOR into a permuted key to reach every
// prefix within e bits of its own among its p leading bits, 0 first, then
// by weight: the multi-probe of a table whose prefix has p bits, for an
// implementation of the index elsewhere (contentseen/redisindex). The
// slice is shared: do not modify it.
func ProbeMasks(p, e int) []uint64 { return probeMasks(p, e) }

// probeMasks returns the masks to XOR into a permuted key for the prefixes
// within e bits of its own among its p leading bits: 0 first, then by
// weight. They are computed once per (p, e) and shared.
func probeMasks(p, e int) []uint64 {
	key := [2]int{p, e}
	if v, ok := probeMaskCache.Load(key); ok {
		return v.([]uint64)
	}
	masks := []uint64{0}
	var rec func(from, left int, m uint64)
	rec = func(from, left int, m uint64) {
		for b := from; b < p; b++ {
			mm := m | 1<<uint(63-b)
			if left == 1 {
				masks = append(masks, mm)
			} else {
				rec(b+1, left-1, mm)
			}
		}
	}
	for w := 1; w <= e && w <= p; w++ {
		rec(0, w, 0)
	}
	v, _ := probeMaskCache.LoadOrStore(key, masks)
	return v.([]uint64)
}

var probeMaskCache sync.Map // [2]int{p, e} -> []uint64

// LayoutByName returns a built-in layout ("4x16", "10x28", "google16") or a
// generated one by the name NewLayout gives it.
func LayoutByName(name string) (Layout, error) {
	switch name {
	case Layout4x16:
		l, err := NewLayout(3, []int{16, 16, 16, 16}, 1)
		l.name = name
		return l, err
	case Layout10x28:
		l, err := NewLayout(3, []int{16, 12, 12, 12, 12}, 2)
		l.name = name
		return l, err
	case LayoutGoogle16:
		return google16(), nil
	}
	// Generated: k3/16-12-12-12-12/lead2.
	parts := strings.Split(name, "/")
	if len(parts) == 3 && strings.HasPrefix(parts[0], "k") && strings.HasPrefix(parts[2], "lead") {
		k, err1 := strconv.Atoi(parts[0][1:])
		lead, err2 := strconv.Atoi(parts[2][4:])
		var blocks []int
		var err3 error
		for _, s := range strings.Split(parts[1], "-") {
			w, err := strconv.Atoi(s)
			if err != nil {
				err3 = err
			}
			blocks = append(blocks, w)
		}
		if err1 == nil && err2 == nil && err3 == nil {
			return NewLayout(k, blocks, lead)
		}
	}
	return Layout{}, fmt.Errorf("contentseen: unknown layout %q (want 4x16, 10x28, google16 or k<k>/<widths>/lead<n>)", name)
}

// google16 is the 16-table layout of Manku et al. for k=3: one of four
// 16-bit blocks leads (at least one agrees within 3 bits), then one of four
// 12-bit blocks of the remaining 48 bits (the other three 16-bit blocks
// hold at most 3 differences, so one of their four 12-bit blocks agrees).
func google16() Layout {
	l := Layout{name: LayoutGoogle16, k: 3, maxK: 3}
	for i := range 4 {
		// The 48 bits outside block i, as ranges from the most significant bit.
		var rest [][2]int
		for b := range 4 {
			if b != i {
				rest = append(rest, [2]int{64 - 16*(b+1), 16})
			}
		}
		sub := splitRanges(rest, 12) // four 12-bit sub-blocks, each one or two ranges
		for j := range 4 {
			order := [][2]int{{64 - 16*(i+1), 16}}
			order = append(order, sub[j]...)
			for s := range 4 {
				if s != j {
					order = append(order, sub[s]...)
				}
			}
			l.tables = append(l.tables, newTable(order, 28))
		}
	}
	return l
}

// splitRanges cuts consecutive bit ranges (src, width) into pieces of w bits.
func splitRanges(ranges [][2]int, w int) [][][2]int {
	var out [][][2]int
	var cur [][2]int
	have := 0
	for _, r := range ranges {
		src, width := r[0], r[1]
		for width > 0 {
			take := min(width, w-have)
			// Take the most significant `take` bits of the remaining range.
			cur = append(cur, [2]int{src + width - take, take})
			width -= take
			have += take
			if have == w {
				out = append(out, cur)
				cur, have = nil, 0
			}
		}
	}
	return out
}

func newTable(order [][2]int, prefix int) table {
	t := table{prefix: prefix}
	dst := 64
	for _, r := range order {
		dst -= r[1]
		// Merge with the previous segment when the bits stay contiguous.
		if n := len(t.segs); n > 0 && t.segs[n-1].src == r[0]+r[1] && t.segs[n-1].dst == dst+r[1] {
			s := &t.segs[n-1]
			s.src, s.dst, s.width = r[0], dst, s.width+r[1]
			s.mask = widthMask(s.width)
			continue
		}
		t.segs = append(t.segs, segment{src: r[0], dst: dst, width: r[1], mask: widthMask(r[1])})
	}
	return t
}

func widthMask(w int) uint64 {
	if w >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(w) - 1
}

// Name returns the name LayoutByName accepts for l.
func (l Layout) Name() string { return l.name }

// String returns l's name.
func (l Layout) String() string { return l.name }

// K returns the largest distance l guarantees to find.
func (l Layout) K() int { return l.k }

// MaxK returns the largest distance a query may ask for (Index.Near): K
// for google16; for a layout of blocks (NewLayout's, 4x16 and 10x28), the
// largest k at which a multi-probe query reads at most 4,096 prefixes per
// table (ProbeRadius). A query beyond K finds every match within its k
// (the pigeonhole over the blocks still holds) but costs more prefixes:
// with 4x16, 17 per table for k = 4..7 and 137 for k = 8..11.
func (l Layout) MaxK() int { return l.maxK }

// computeMaxK computes MaxK, once per layout.
func (l Layout) computeMaxK() int {
	if l.blocks == nil {
		return l.k
	}
	k := l.k
	for k < 63 {
		e := l.ProbeRadius(k + 1)
		for t := range l.tables {
			if probeCount(l.tables[t].prefix, e) > maxProbes {
				return k
			}
		}
		k++
	}
	return k
}

// Tables returns the number of tables, i.e. the copies of each fingerprint.
func (l Layout) Tables() int { return len(l.tables) }

// PrefixBits returns how many leading bits of table t's permuted keys a
// query must match exactly.
func (l Layout) PrefixBits(t int) int { return l.tables[t].prefix }

// Permute returns fp with its bits rearranged for table t: the table's
// leading blocks first, so that sorting permuted keys groups fingerprints
// that agree on those blocks.
func (l Layout) Permute(t int, fp Fingerprint) uint64 {
	var p uint64
	for _, s := range l.tables[t].segs {
		p |= (uint64(fp) >> uint(s.src) & s.mask) << uint(s.dst)
	}
	return p
}

// Unpermute inverts Permute.
func (l Layout) Unpermute(t int, p uint64) Fingerprint {
	var fp uint64
	for _, s := range l.tables[t].segs {
		fp |= (p >> uint(s.dst) & s.mask) << uint(s.src)
	}
	return Fingerprint(fp)
}

// prefixRange returns the smallest and largest permuted keys of table t
// sharing the prefix of permuted key p.
func (l Layout) prefixRange(t int, p uint64) (lo, hi uint64) {
	low := widthMask(64 - l.tables[t].prefix)
	return p &^ low, p | low
}

func (l Layout) valid() bool { return len(l.tables) > 0 }

// combinations returns every k-subset of 0..n-1 in lexicographic order.
func combinations(n, k int) [][]int {
	var out [][]int
	var rec func(start int, cur []int)
	rec = func(start int, cur []int) {
		if len(cur) == k {
			out = append(out, append([]int(nil), cur...))
			return
		}
		for i := start; i < n; i++ {
			rec(i+1, append(cur, i))
		}
	}
	rec(0, nil)
	return out
}

func joinInts(xs []int, sep string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, sep)
}
