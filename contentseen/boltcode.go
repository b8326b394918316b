package contentseen

import (
	"container/heap"
	"fmt"
	"math"
	"slices"
)

// The Huffman code of a table's h values (storage format 3, see
// boltblock.go). In a sorted run of permuted fingerprints, h — the
// position of the first bit where an entry differs from the one before —
// clusters around log2 of the run's density: 20 ± 2 for a table of one
// million, 23 ± 2 for ten million. Coding h in about two bits instead of
// six is most of what the compressed format saves over writing the
// distance from the previous entry.
//
// The symbol coded is h together with the first two bits after it (fewer
// when fewer follow): those bits are not uniform — a small step from the
// entry before is likelier than a big one, so after h they lean to zero —
// and coding them with h saves a third of a bit per entry (measured on
// 200,000 random fingerprints: 49.75 bits per entry with h alone, 49.42
// with two bits, 49.35 with three; the floor is 47.83). The rest of the
// scheme's gap to the floor is inherent in it: h is always a position
// where the entry before has a 0, which a code of h alone cannot know.
//
// A table's code is built from the symbols measured in the table (by a
// bulk load, and by each merge of the delta for the next one), stored with
// the table under a version number, and every block names the version it
// was written with; old versions stay readable. Codes are canonical and
// limited to maxCodeLen bits, so one lookup in a 4,096-entry table decodes
// any symbol.

const (
	hSymbols   = 256 // symbol h<<2 | the next (up to) two bits
	maxCodeLen = 12  // longest code; decode tables have 1<<maxCodeLen entries
)

// symbolOf returns the symbol of entry cur whose first bit differing from
// the entry before is h, and how many of cur's low bits are left to write.
func symbolOf(h uint, cur uint64) (sym int, rest uint) {
	top := min(2, 63-h)
	rest = 63 - h - top
	t := cur >> rest & (1<<top - 1)
	return int(h<<2 | uint(t)), rest
}

// symbol is what decoding a symbol needs: the bits it leaves to read, and
// the masks that make the entry from the one before (keep its bits above
// h, set bit h and the two coded bits).
type symbol struct {
	keep, set uint64
	rest      uint
}

var symbols = func() (s [hSymbols]symbol) {
	for sym := range hSymbols {
		h, t := uint(sym>>2), uint64(sym&3)
		top := min(2, 63-h)
		rest := 63 - h - top
		s[sym] = symbol{keep: ^(^uint64(0) >> h), set: 1<<(63-h) | t<<rest, rest: rest}
	}
	return s
}()

// hcode is one version of a table's code. It is immutable once built.
type hcode struct {
	lens [hSymbols]uint8  // code length of each symbol, 1..maxCodeLen
	code [hSymbols]uint16 // canonical code of each symbol, lens[s] bits
	// dec maps the next maxCodeLen bits of a stream to symbol | len<<8 |
	// rest<<16, rest being the symbol's bits after the code: a decoder
	// advances its bit reader by len and rest from this one load, and
	// loads the symbol's masks beside it, not before: a load less on the
	// chain from one entry to the next (the join against 1M, batch 1e4,
	// 13% faster; denser batches gain less, their time is comparisons).
	dec [1 << maxCodeLen]uint32
}

// flatCode is version 0 of every table's code: eight bits for every
// symbol, used until a table has data to measure.
func flatCode() *hcode {
	var lens [hSymbols]uint8
	for i := range lens {
		lens[i] = 8
	}
	c, err := newCode(lens)
	if err != nil {
		panic(err) // eight bits for 256 symbols is a complete code
	}
	return c
}

// newCode builds the canonical code with the given lengths. The lengths
// must satisfy Kraft's inequality and be 1..maxCodeLen.
func newCode(lens [hSymbols]uint8) (*hcode, error) {
	c := &hcode{lens: lens}
	kraft := 0
	for h, l := range lens {
		if l < 1 || l > maxCodeLen {
			return nil, fmt.Errorf("code length %d for h %d", l, h)
		}
		kraft += 1 << (maxCodeLen - l)
	}
	if kraft > 1<<maxCodeLen {
		return nil, fmt.Errorf("code lengths exceed Kraft's inequality (%d > %d)", kraft, 1<<maxCodeLen)
	}
	// Canonical codes: by length, then by symbol.
	order := make([]int, hSymbols)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(lens[a]) - int(lens[b]) })
	next, prevLen := 0, 0
	for _, h := range order {
		l := int(lens[h])
		next <<= l - prevLen
		prevLen = l
		c.code[h] = uint16(next)
		// Every maxCodeLen-bit window starting with this code decodes to h.
		lo := next << (maxCodeLen - l)
		for i := lo; i < lo+1<<(maxCodeLen-l); i++ {
			c.dec[i] = uint32(h) | uint32(l)<<8 | uint32(symbols[h].rest)<<16
		}
		next++
	}
	return c, nil
}

// buildCode returns the length-limited Huffman code for the histogram of
// h. Every h gets a code (an insert may bring any h), so each count is
// raised by one before building.
func buildCode(hist *[hSymbols]uint64) *hcode {
	var lens [hSymbols]uint8
	huffmanLengths(hist, &lens)
	limitLengths(hist, &lens)
	c, err := newCode(lens)
	if err != nil {
		panic(fmt.Sprintf("contentseen: built an invalid code: %v", err)) // limitLengths keeps Kraft's inequality
	}
	return c
}

// huffmanLengths sets lens to the Huffman code lengths of hist+1.
func huffmanLengths(hist *[hSymbols]uint64, lens *[hSymbols]uint8) {
	type node struct {
		w           uint64
		left, right int // children, -1 for a leaf
	}
	nodes := make([]node, 0, 2*hSymbols)
	q := &nodeHeap{}
	for h := range hSymbols {
		nodes = append(nodes, node{hist[h] + 1, -1, -1})
		heap.Push(q, heapItem{hist[h] + 1, h})
	}
	for q.Len() > 1 {
		a, b := heap.Pop(q).(heapItem), heap.Pop(q).(heapItem)
		nodes = append(nodes, node{a.w + b.w, a.i, b.i})
		heap.Push(q, heapItem{a.w + b.w, len(nodes) - 1})
	}
	var walk func(i int, depth uint8)
	walk = func(i int, depth uint8) {
		if n := nodes[i]; n.left >= 0 {
			walk(n.left, depth+1)
			walk(n.right, depth+1)
			return
		}
		lens[i] = max(depth, 1)
	}
	walk(len(nodes)-1, 0)
}

// limitLengths caps lens at maxCodeLen and restores Kraft's inequality by
// lengthening the least frequent codes still below the cap (the usual
// heuristic; within a fraction of a bit of the optimal limited code for
// the skewed histograms of h).
func limitLengths(hist *[hSymbols]uint64, lens *[hSymbols]uint8) {
	kraft := 0
	for h := range lens {
		lens[h] = min(lens[h], maxCodeLen)
		kraft += 1 << (maxCodeLen - lens[h])
	}
	for kraft > 1<<maxCodeLen {
		best := -1
		for h := range lens {
			if lens[h] < maxCodeLen && (best < 0 || hist[h] < hist[best] ||
				hist[h] == hist[best] && lens[h] > lens[best]) {
				best = h
			}
		}
		kraft -= 1 << (maxCodeLen - lens[best] - 1)
		lens[best]++
	}
}

// bitsFor returns the bits of the codes of hist's symbols with code c
// (the bits after them do not depend on the code).
func (c *hcode) bitsFor(hist *[hSymbols]uint64) float64 {
	var bits float64
	for s, n := range hist {
		bits += float64(n) * float64(c.lens[s])
	}
	return bits
}

// worthReplacing reports whether a code built for hist saves enough over
// c (a quarter of a bit per entry) to be worth a new version.
func (c *hcode) worthReplacing(hist *[hSymbols]uint64) (*hcode, bool) {
	var n uint64
	for _, v := range hist {
		n += v
	}
	if n < 1024 {
		return nil, false
	}
	nc := buildCode(hist)
	saved := c.bitsFor(hist) - nc.bitsFor(hist)
	return nc, saved > float64(n)/4 && !math.IsNaN(saved)
}

type heapItem struct {
	w uint64
	i int
}

type nodeHeap []heapItem

func (q nodeHeap) Len() int { return len(q) }
func (q nodeHeap) Less(i, j int) bool {
	return q[i].w < q[j].w || q[i].w == q[j].w && q[i].i < q[j].i
}
func (q nodeHeap) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *nodeHeap) Push(x any)   { *q = append(*q, x.(heapItem)) }
func (q *nodeHeap) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}
