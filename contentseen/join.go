package contentseen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"sync"
)

// Batch join: the MapReduce form of the near-duplicate problem (Manku et
// al., section 3.2). Given a batch B of new fingerprints and a large stored
// set F, build the permuted tables over B, which is small enough to keep in
// memory, and stream F through them: every f in F probes each table once.
// The work is a map over partitions of F (Probe, or one partition of
// JoinPartitions) followed by a merge of the pairs each partition found;
// nothing in the map step depends on another partition, so the partitions
// can run on several goroutines here, or on several machines holding the
// same Joiner (B is small: 1M fingerprints take about 60 MB of 4x16 tables).

// Pair is one result of a batch join: a batch fingerprint and a stored
// fingerprint within k bits of each other.
type Pair struct {
	BatchID, StoredID uint64
	Distance          int
}

// FingerprintSource yields stored fingerprints one at a time, for a join.
// Next returns io.EOF (and nothing else) at the end. A source is used by one
// goroutine at a time.
type FingerprintSource interface {
	Next() (id uint64, fp Fingerprint, err error)
}

// Joiner holds the permuted tables over one batch and reports, for each
// stored fingerprint it is given, the batch fingerprints within k bits.
//
// Each table is one array of the batch's fingerprints sorted by the
// table's prefix (the leading blocks of the permuted key) with a
// direct-address index on the prefix's top bits (about four entries per
// bucket), and a bitmap of the batch's prefixes (about one byte per batch
// fingerprint, at most one bit in eight set where the prefix is long
// enough), which stops most probes after one cached load. A probe costs per
// table one shift-and-mask gather, one filter bit and, when it is set, one index
// read and an XOR and popcount for each of about four candidates, compared
// unpermuted (a permutation keeps the Hamming distance); the whole prefix
// is checked only for a candidate within k.
//
// Exactly once: a pair within k may agree on the prefix of several tables,
// and would be found in each. It is reported only by the first table (in
// the layout's order) whose prefix the two share; the other tables find
// it, see that an earlier table's prefix agrees, and skip it. Every batch
// entry is reported on its own, so repeated batch or stored fingerprints
// give one pair per (batch entry, stored entry).
//
// A Joiner is immutable after NewJoiner and safe for concurrent use.
type Joiner struct {
	layout Layout
	k      int
	ids    []uint64 // batch ids, indexed by joinEntry.bi
	tables []joinTable
}

// joinTable is one permuted table over the batch.
type joinTable struct {
	gather  []gatherSeg   // how to read the table's prefix out of a fingerprint
	g3      [3]gatherSeg  // gather padded with empty segments, when it has at most 3
	short   bool          // gather fits g3
	one     bool          // gather is one run (4x16): g3[0] alone, dst 0
	shift   uint          // prefix >> shift = bucket number
	fshift  uint          // prefix >> fshift = bit number in filter
	filter  []uint64      // bitmap of the prefixes' top bits in the batch
	offsets []uint32      // fps[offsets[b]:offsets[b+1]] have bucket b
	fps     []Fingerprint // batch fingerprints sorted by prefix (unpermuted)
	bis     []uint32      // bis[i]: index in the batch of fps[i]
}

// gatherSeg moves width bits at src of a fingerprint to dst of a prefix.
type gatherSeg struct {
	src, dst uint
	mask     uint64
}

// maxBucketBits bounds a table's direct-address index: 2^22 offsets are
// 16 MB, for batches of about 4M.
const maxBucketBits = 22

// maxFilterBits bounds a table's filter: 2^26 bits are 8 MB.
const maxFilterBits = 26

// NewJoiner builds the tables of layout l over the batch: batchFPs[i] has
// id batch[i]. k must be within l.K(), and one prefix per table must find
// it (l.ProbeRadius(k) == 0; a multi-probe layout joins at smaller k). It copies what it keeps. Cost:
// Tables() sorts of the batch and about 14 bytes per batch fingerprint per
// table.
func NewJoiner(l Layout, k int, batch []uint64, batchFPs []Fingerprint) (*Joiner, error) {
	if l.Tables() == 0 {
		return nil, errors.New("contentseen: join: zero layout")
	}
	if k < 0 || k > l.K() {
		return nil, fmt.Errorf("contentseen: join: k = %d, layout %s finds every match only for k in 0..%d", k, l.Name(), l.K())
	}
	if e := l.ProbeRadius(k); e > 0 {
		// A join compares the entries under equal prefixes only.
		return nil, fmt.Errorf("contentseen: join: k = %d on layout %s needs prefixes within %d bits (multi-probe), which a join does not read: join at k <= %d",
			k, l.Name(), e, maxOneProbeK(l))
	}
	if len(batch) != len(batchFPs) {
		return nil, fmt.Errorf("contentseen: join: %d ids for %d fingerprints", len(batch), len(batchFPs))
	}
	if uint64(len(batch)) >= 1<<32 {
		return nil, fmt.Errorf("contentseen: join: batch of %d fingerprints, at most 2^32-1", len(batch))
	}
	j := &Joiner{layout: l, k: k, ids: slices.Clone(batch), tables: make([]joinTable, l.Tables())}
	// Bucket bits: about four batch entries per bucket, so that a bucket
	// is about one cache line of fingerprints and the offsets stay small
	// (the probe is bound by cache misses, not by comparisons).
	rb := max(0, bits.Len(uint(len(batch)))-2)
	type entry struct {
		prefix uint64
		bi     uint32
	}
	es := make([]entry, len(batch))
	for t := range j.tables {
		p := l.PrefixBits(t)
		r := min(rb, p, maxBucketBits)
		fb := min(rb+5, p, maxFilterBits) // at most 1 bit in 8 set: most probes stop here
		jt := joinTable{gather: gatherOf(l, t), shift: uint(p - r), fshift: uint(p - fb)}
		if len(jt.gather) <= len(jt.g3) {
			jt.short = true
			copy(jt.g3[:], jt.gather) // padding: mask 0 contributes nothing
			jt.one = len(jt.gather) == 1
		}
		jt.filter = make([]uint64, (1<<fb+63)/64)
		for i, fp := range batchFPs {
			es[i] = entry{prefix: jt.prefixOf(fp), bi: uint32(i)}
		}
		slices.SortFunc(es, func(a, b entry) int {
			if a.prefix != b.prefix {
				if a.prefix < b.prefix {
					return -1
				}
				return 1
			}
			return int(a.bi) - int(b.bi) // batch order within a prefix
		})
		jt.offsets = make([]uint32, 1<<r+1)
		jt.fps = make([]Fingerprint, len(es))
		jt.bis = make([]uint32, len(es))
		for i, e := range es {
			jt.offsets[e.prefix>>jt.shift+1]++
			f := e.prefix >> jt.fshift
			jt.filter[f/64] |= 1 << (f % 64)
			jt.fps[i], jt.bis[i] = batchFPs[e.bi], e.bi
		}
		for b := 1; b < len(jt.offsets); b++ {
			jt.offsets[b] += jt.offsets[b-1]
		}
		j.tables[t] = jt
	}
	return j, nil
}

// gatherOf derives, from Permute alone, where each bit of table t's prefix
// comes from, as runs of consecutive bits.
func gatherOf(l Layout, t int) []gatherSeg {
	p := l.PrefixBits(t)
	var segs []gatherSeg
	var src, dst, width int = -1, -1, 0
	for i := range 64 {
		pos := bits.TrailingZeros64(l.Permute(t, Fingerprint(1)<<i))
		if pos < 64-p {
			continue
		}
		d := pos - (64 - p)
		if width > 0 && i == src+width && d == dst+width {
			width++
			continue
		}
		if width > 0 {
			segs = append(segs, gatherSeg{src: uint(src), dst: uint(dst), mask: widthMask(width)})
		}
		src, dst, width = i, d, 1
	}
	if width > 0 {
		segs = append(segs, gatherSeg{src: uint(src), dst: uint(dst), mask: widthMask(width)})
	}
	return segs
}

// prefixOf returns the table's prefix of fp: the top PrefixBits of
// Permute(t, fp), as a number. The built-in layouts' prefixes are at most
// three runs of bits: those take the unrolled, inlined path.
func (jt *joinTable) prefixOf(fp Fingerprint) uint64 {
	if jt.short {
		g, x := &jt.g3, uint64(fp)
		return (x>>g[0].src&g[0].mask)<<g[0].dst | (x>>g[1].src&g[1].mask)<<g[1].dst | (x>>g[2].src&g[2].mask)<<g[2].dst
	}
	return jt.prefixSlow(fp)
}

func (jt *joinTable) prefixSlow(fp Fingerprint) uint64 {
	var q uint64
	for _, s := range jt.gather {
		q |= (uint64(fp) >> s.src & s.mask) << s.dst
	}
	return q
}

// Layout returns the layout of j's tables.
func (j *Joiner) Layout() Layout { return j.layout }

// K returns the distance j reports pairs within.
func (j *Joiner) K() int { return j.k }

// Len returns the number of batch fingerprints.
func (j *Joiner) Len() int { return len(j.ids) }

// Probe is the map step for one stored fingerprint: it calls emit for every
// batch fingerprint within K() bits of fp, each once, in table order and
// within a table in prefix then batch order. An error from emit stops the
// probe and is returned as is. Probe is safe for concurrent use.
func (j *Joiner) Probe(id uint64, fp Fingerprint, emit func(Pair) error) error {
	var buf [8]Pair
	for _, p := range j.probe(id, fp, buf[:0]) {
		if err := emit(p); err != nil {
			return err
		}
	}
	return nil
}

// probe appends the pairs of stored fingerprint fp to out.
func (j *Joiner) probe(id uint64, fp Fingerprint, out []Pair) []Pair {
	for t := range j.tables {
		jt := &j.tables[t]
		var q uint64 // jt.prefixOf(fp), inlined by hand: it is most of a probe
		if g := &jt.g3; jt.one {
			q = uint64(fp) >> g[0].src & g[0].mask
		} else if jt.short {
			x := uint64(fp)
			q = (x>>g[0].src&g[0].mask)<<g[0].dst | (x>>g[1].src&g[1].mask)<<g[1].dst | (x>>g[2].src&g[2].mask)<<g[2].dst
		} else {
			q = jt.prefixSlow(fp)
		}
		if f := q >> jt.fshift; jt.filter[f/64]&(1<<(f%64)) == 0 {
			continue
		}
		b := q >> jt.shift
		lo, hi := jt.offsets[b], jt.offsets[b+1]
		for i, g := range jt.fps[lo:hi] {
			d := bits.OnesCount64(uint64(g ^ fp))
			// Rare: check the whole prefix and the earlier tables only for
			// a pair within k.
			if d > j.k || jt.prefixOf(g) != q || j.earlierAgree(t, g, fp) {
				continue
			}
			out = append(out, Pair{BatchID: j.ids[jt.bis[int(lo)+i]], StoredID: id, Distance: d})
		}
	}
	return out
}

// earlierAgree reports whether a and b share the prefix of a table before
// t, which then reported (or will report) the pair.
func (j *Joiner) earlierAgree(t int, a, b Fingerprint) bool {
	for u := range t {
		if j.tables[u].prefixOf(a) == j.tables[u].prefixOf(b) {
			return true
		}
	}
	return false
}

// probeChunk is how many stored fingerprints a partition probes between
// checks of ctx.
const probeChunk = 4096

// JoinPartitions streams every partition of the stored set through j on
// up to workers goroutines (at least 1) and calls emit with every pair
// within j.K(), each once. It is the whole batch join: a map over each
// partition (its pairs, in the partition's order) and a merge that emits
// the partitions' pairs in partition order, so the output is the same for
// any number of workers. emit is called from one goroutine at a time; a
// partition's pairs are held in memory until the partitions before it are
// emitted. The first error (from a source, from emit, or ctx's) stops all
// workers and is returned; a source's error is wrapped with its partition
// number.
func JoinPartitions(ctx context.Context, j *Joiner, parts []FingerprintSource, workers int, emit func(Pair) error) error {
	return MapMerge(ctx, len(parts), workers, func(ctx context.Context, i int) ([]Pair, error) {
		pairs, err := mapPartition(ctx, j, parts[i])
		if err != nil {
			err = fmt.Errorf("contentseen: join: partition %d: %w", i, err)
		}
		return pairs, err
	}, emit)
}

// MapMerge is the shape of every batch join here: it runs the map steps
// work(ctx, 0) .. work(ctx, n-1) on up to workers goroutines (at least 1)
// and merges their results, calling emit with each step's pairs in order
// of i as soon as the steps before it are emitted, so the output is the
// same for any number of workers. emit is called from one goroutine at a
// time; a step's pairs are held in memory until the steps before it are
// emitted. The first error (from a step, from emit, or ctx's) cancels the
// ctx the steps get, stops the rest and is returned; MapMerge returns
// after every step it started has returned.
func MapMerge(ctx context.Context, n, workers int, work func(ctx context.Context, i int) ([]Pair, error), emit func(Pair) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers = max(1, min(workers, n))

	type result struct {
		pairs []Pair
		err   error
	}
	done := make([]chan result, n)
	for i := range done {
		done[i] = make(chan result, 1)
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				pairs, err := work(ctx, i)
				done[i] <- result{pairs, err}
			}
		})
	}
	wg.Go(func() { // the feeder, waited for like the workers
		defer close(next)
		for i := range n {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	})

	// Merge in order.
	err := func() error {
		for i := range n {
			var r result
			select {
			case r = <-done[i]:
			case <-ctx.Done():
				return ctx.Err()
			}
			if r.err != nil {
				return r.err
			}
			for _, p := range r.pairs {
				if err := emit(p); err != nil {
					return err
				}
			}
		}
		return nil
	}()
	cancel()
	wg.Wait()
	return err
}

// mapPartition is the map step over one partition: all its pairs, in the
// partition's order.
func mapPartition(ctx context.Context, j *Joiner, src FingerprintSource) ([]Pair, error) {
	var out []Pair
	for n := 0; ; n++ {
		if n%probeChunk == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		id, fp, err := src.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = j.probe(id, fp, out)
	}
}

// SliceSource returns a FingerprintSource over fps with ids ids (of the
// same length; the shorter one bounds it). It does not copy them.
func SliceSource(ids []uint64, fps []Fingerprint) FingerprintSource {
	n := min(len(ids), len(fps))
	return &sliceSource{ids: ids[:n], fps: fps[:n]}
}

type sliceSource struct {
	ids []uint64
	fps []Fingerprint
	i   int
}

func (s *sliceSource) Next() (uint64, Fingerprint, error) {
	if s.i == len(s.fps) {
		return 0, 0, io.EOF
	}
	i := s.i
	s.i++
	return s.ids[i], s.fps[i], nil
}

// SplitSlices cuts (ids, fps) into n sources of nearly equal length, the
// partitions for JoinPartitions when the stored set is in memory.
func SplitSlices(ids []uint64, fps []Fingerprint, n int) []FingerprintSource {
	total := min(len(ids), len(fps))
	n = max(1, min(n, total))
	parts := make([]FingerprintSource, 0, n)
	for i := range n {
		lo, hi := total*i/n, total*(i+1)/n
		parts = append(parts, SliceSource(ids[lo:hi], fps[lo:hi]))
	}
	return parts
}

// maxOneProbeK returns the largest k at which l reads one prefix per table.
func maxOneProbeK(l Layout) int {
	k := 0
	for k < l.K() && l.ProbeRadius(k+1) == 0 {
		k++
	}
	return k
}
