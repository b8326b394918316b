package contentseen

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	bolt "go.etcd.io/bbolt"
)

// Batch join against a BoltIndex: when the stored set F is an index with
// the Joiner's layout, F is already kept as the same permuted tables,
// sorted. So each table is joined by merging two sorted runs: the batch's
// table (the Joiner's, in memory) and the index's blocks. For each
// distinct prefix of the batch the blocks holding that prefix are found by
// stepping the cursor forward (or seeking, when they are far), decoding
// starts at the last restart point at or before the prefix, and every
// stored entry of the prefix range is compared with the batch entries of
// that prefix by XOR and popcount on permuted values. Nothing is read at
// random: blocks and restart intervals holding no prefix of the batch are
// skipped, and the rest is one sequential decode per table. Stored
// fingerprints still in the delta (not yet merged into the blocks) go
// through Joiner.probe.
//
// The work is a map over units (table, range of the batch's prefixes),
// each depending only on the transaction's snapshot and the Joiner, and a
// merge that concatenates their pairs in unit order. JoinTx runs the units
// in order on the caller's goroutine.

// joinUnitEntries is about how many batch entries of one table a unit
// covers (it ends at a prefix boundary). Units bound the pairs held
// before they are emitted and are what a caller would hand to several
// goroutines or machines.
const joinUnitEntries = 1 << 16

// joinStepBlocks is how many blocks the join steps over with the cursor
// before seeking instead: a step costs a key comparison on the same or the
// next leaf page; a seek descends from the root.
const joinStepBlocks = 8

// JoinTx joins batch j against every fingerprint the index stores, as seen
// by tx (read or write), and calls emit with every pair within j.K(): one
// pair per (batch entry, stored fingerprint), as JoinPartitions over the
// index's fingerprints gives. The stored side is what the index records:
// one id per distinct fingerprint (the first one recorded).
//
// j's layout must be the index's (it is the tables' order that makes the
// join a merge); otherwise JoinTx returns an error and emits nothing.
//
// Order: table by table in layout order; within a table by the stored
// entry's permuted value, then by the batch's order within the prefix
// (batch index); each pair comes from the first table whose prefix the
// two share. Then the pairs of the stored fingerprints still in the delta,
// in the order they were recorded, each's pairs in Probe's order.
//
// Cost: per table, one decode of the blocks holding a batch prefix (all
// of them once the batch has more prefixes than the table has restart
// intervals, 1 per 128 stored entries) plus a comparison per (stored,
// batch) pair sharing a prefix; a seek per run of skipped blocks; a
// lookup in table 0 for each pair reported by another table. Memory: 8
// bytes per batch entry for one table's permuted values, and the pairs of
// one unit. An error from emit stops the join and is returned as is; ctx
// is checked between units.
func (x *BoltIndex) JoinTx(ctx context.Context, tx *bolt.Tx, j *Joiner, emit func(Pair) error) error {
	if j.layout.Name() != x.layout.Name() {
		return fmt.Errorf("contentseen: join index: batch layout %s, index layout %s", j.layout.Name(), x.layout.Name())
	}
	if j.k > x.layout.K() { // NewJoiner checks this; a guard for the merge's completeness
		return fmt.Errorf("contentseen: join index: k = %d, layout %s finds every match only for k in 0..%d", j.k, x.layout.Name(), x.layout.K())
	}
	top, err := x.top(tx)
	if err != nil {
		return err
	}
	tables := top.Bucket(tablesBucket)
	if tables == nil {
		return fmt.Errorf("contentseen: bucket %q/%q missing", x.bucket, tablesBucket)
	}
	var pb []uint64
	var out []Pair
	for t := range j.tables {
		pb = j.permuted(t, pb)
		for _, u := range joinUnits(pb, x.layout.PrefixBits(t), joinUnitEntries) {
			if err := ctx.Err(); err != nil {
				return err
			}
			out, err = x.joinRange(tables, j, t, pb, u[0], u[1], out[:0])
			if err != nil {
				return fmt.Errorf("contentseen: join index: table %d: %w", t, err)
			}
			for _, p := range out {
				if err := emit(p); err != nil {
					return err
				}
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// The delta in tx's own snapshot rather than the mirror in memory: it
	// is read whole anyway, it is exact for any transaction (a writer's
	// own entries, a reader older than the last merge), and it needs no
	// lock while the join runs.
	err = x.joinDelta(tables, top.Bucket(deltaBucket), j, emit)
	if ee := (errJoinEmit{}); errors.As(err, &ee) {
		return ee.err
	}
	if err != nil {
		return fmt.Errorf("contentseen: join index: delta: %w", err)
	}
	return nil
}

// permuted returns, in pb's storage, the permuted values of table t's
// batch entries, in the table's order (by prefix, then batch index).
func (j *Joiner) permuted(t int, pb []uint64) []uint64 {
	jt := &j.tables[t]
	pb = append(pb[:0], make([]uint64, len(jt.fps))...)
	for i, fp := range jt.fps {
		pb[i] = j.layout.Permute(t, fp)
	}
	return pb
}

// joinUnits cuts the sorted permuted values pb (prefixes of p bits) into
// ranges [s, e) of about n entries, each ending at a prefix boundary, so
// that a unit is a range of prefixes.
func joinUnits(pb []uint64, p, n int) [][2]int {
	low := widthMask(64 - p)
	var us [][2]int
	for s := 0; s < len(pb); {
		e := min(s+n, len(pb))
		for e < len(pb) && pb[e]&^low == pb[e-1]&^low {
			e++
		}
		us = append(us, [2]int{s, e})
		s = e
	}
	return us
}

// joinRange is the map step of one unit: table t of the index against the
// batch entries s..e-1 of the Joiner's table t (whole prefix groups), pb
// their permuted values. It appends the unit's pairs to out, in the order
// JoinTx documents.
func (x *BoltIndex) joinRange(tables *bolt.Bucket, j *Joiner, t int, pb []uint64, s, e int, out []Pair) ([]Pair, error) {
	jt := &j.tables[t]
	low := widthMask(64 - x.layout.PrefixBits(t))
	k := j.k
	c := tables.Cursor()
	var (
		b      block
		loaded bool   // b holds a block of table t
		nk, nv []byte // the block after b (the cursor is on it), nil if none
		i      int    // index in b of cur
		cur    uint64 // the entry being compared
		r      bitReader
		err    error
	)
	// next returns the block after the cursor's if it is in table t.
	next := func() ([]byte, []byte) {
		k, v := c.Next()
		if len(k) != 9 || int(k[0]) != t {
			return nil, nil
		}
		return k, v
	}
	for g := s; g < e; {
		lo := pb[g] &^ low
		hi := lo | low
		ge := g + 1
		for ge < e && pb[ge]&^low == lo {
			ge++
		}
		group := pb[g:ge]

		// Position cur at or before the first entry >= lo, skipping what
		// cannot hold it.
		switch {
		case !loaded || cur < lo && nk != nil && binary.BigEndian.Uint64(nk[1:]) <= lo:
			var key, v []byte
			for step := 0; loaded && step < joinStepBlocks && nk != nil && binary.BigEndian.Uint64(nk[1:]) <= lo; step++ {
				key, v = nk, nv
				nk, nv = next()
			}
			if !loaded || nk != nil && binary.BigEndian.Uint64(nk[1:]) <= lo {
				if key, v = seekBlock(c, t, lo); key == nil {
					return out, nil // table t is empty
				}
				nk, nv = next()
			}
			if b, err = x.parseBlock(t, key, v); err != nil {
				return out, fmt.Errorf("block %x: %w", key[1:], err)
			}
			loaded = true
			i, cur, r = b.seek(lo)
		case cur < lo:
			i, cur, r = b.seekFrom(lo, i, cur, r)
		}

		// Decode the prefix range. The decoding loop of blockIter.next by
		// hand, with the reader's state in local variables (registers):
		// this loop is most of a join.
		dec := &b.code.dec
		buf, pos, acc, nb := r.b, r.pos, r.acc, r.n
		for cur <= hi {
			if cur >= lo {
				for gi, q := range group {
					d := bits.OnesCount64(cur ^ q)
					if d > k {
						continue
					}
					// Rare: a pair within k.
					f := x.layout.Unpermute(t, cur)
					bf := jt.fps[g+gi]
					if j.earlierAgree(t, bf, f) {
						continue
					}
					var id uint64
					if t == 0 {
						id = b.id(i)
					} else {
						var ok bool
						if id, ok, err = x.lookupID(tables, f); err != nil {
							return out, err
						} else if !ok {
							return out, fmt.Errorf("holds %v, table 0 does not", f)
						}
					}
					out = append(out, Pair{BatchID: j.ids[jt.bis[g+gi]], StoredID: id, Distance: d})
				}
			}
			i++
			if i == b.n {
				if nk == nil {
					return out, nil // the table's last entry: no later prefix has any
				}
				if b, err = x.parseBlock(t, nk, nv); err != nil {
					return out, fmt.Errorf("block %x: %w", nk[1:], err)
				}
				nk, nv = next()
				dec = &b.code.dec
				i, cur = 0, b.first
				buf, pos, acc, nb = b.stream, 0, 0, 0
				continue
			}
			if i%restartEvery == 0 {
				r = bitReader{b: buf, pos: pos, acc: acc, n: nb}
				cur = r.read(64)
				buf, pos, acc, nb = r.b, r.pos, r.acc, r.n
				continue
			}
			if nb < 56 {
				if pos+8 <= len(buf) { // bitReader.refill's fast path
					acc |= binary.BigEndian.Uint64(buf[pos:]) >> nb
					pos += int(63-nb) >> 3
					nb |= 56
				} else {
					r = bitReader{b: buf, pos: pos, acc: acc, n: nb}
					r.refill()
					buf, pos, acc, nb = r.b, r.pos, r.acc, r.n
				}
			}
			dd := dec[acc>>(64-maxCodeLen)]
			l := uint(dd >> 8)
			acc <<= l
			nb -= l
			sym := &symbols[dd&0xff]
			var suf uint64
			if sl := sym.rest; sl <= nb {
				suf = acc >> (64 - sl) // sl == 0: 0
				acc <<= sl
				nb -= sl
			} else {
				r = bitReader{b: buf, pos: pos, acc: acc, n: nb}
				suf = r.read(sl)
				buf, pos, acc, nb = r.b, r.pos, r.acc, r.n
			}
			cur = cur&sym.keep | sym.set | suf
		}
		r = bitReader{b: buf, pos: pos, acc: acc, n: nb}
		g = ge
	}
	return out, nil
}

// seekFrom is seek for a decoder already at entry i (value cur, reader r
// after it) of b: it jumps to the last restart point at or below lo if
// that is after i, else keeps the position. Restart points at or before i
// are not read again.
func (b *block) seekFrom(lo uint64, i int, cur uint64, r bitReader) (int, uint64, bitReader) {
	for jr := i / restartEvery; 2*jr < len(b.restarts); jr++ {
		off := int(binary.BigEndian.Uint16(b.restarts[2*jr:]))
		rr := bitReader{b: b.stream[min(off>>3, len(b.stream)):]}
		rr.read(uint(off & 7))
		v := rr.read(64)
		if v > lo {
			break
		}
		i, cur, r = (jr+1)*restartEvery, v, rr
	}
	return i, cur, r
}

// joinDelta probes j with every entry of the delta bucket (in sequence
// order) and emits its pairs, except those the blocks reported: an entry
// a merge has already written into the blocks of the table that reports
// the pair (a snapshot taken during a merge holds an entry both in the
// delta and in the tables merged so far).
func (x *BoltIndex) joinDelta(tables, delta *bolt.Bucket, j *Joiner, emit func(Pair) error) error {
	if delta == nil {
		return fmt.Errorf("bucket %q/%q missing", x.bucket, deltaBucket)
	}
	c := delta.Cursor()
	for key, v := c.First(); key != nil; key, v = c.Next() {
		if len(key) != 8 || len(v) != 16 {
			return fmt.Errorf("corrupt delta entry %x", key)
		}
		f := Fingerprint(binary.BigEndian.Uint64(v))
		id := binary.BigEndian.Uint64(v[8:])
		for t := range j.tables {
			jt := &j.tables[t]
			q := jt.prefixOf(f)
			if fb := q >> jt.fshift; jt.filter[fb/64]&(1<<(fb%64)) == 0 {
				continue
			}
			bk := q >> jt.shift
			lo, hi := jt.offsets[bk], jt.offsets[bk+1]
			for n, g := range jt.fps[lo:hi] {
				d := bits.OnesCount64(uint64(g ^ f))
				if d > j.k || jt.prefixOf(g) != q || j.earlierAgree(t, g, f) {
					continue
				}
				in, err := x.inTable(tables, t, x.layout.Permute(t, f))
				if err != nil {
					return err
				}
				if in {
					continue
				}
				if err := emit(Pair{BatchID: j.ids[jt.bis[int(lo)+n]], StoredID: id, Distance: d}); err != nil {
					return errJoinEmit{err}
				}
			}
		}
	}
	return nil
}

// errJoinEmit carries emit's error through joinDelta's wrapping, so that
// JoinTx returns it as is.
type errJoinEmit struct{ err error }

func (e errJoinEmit) Error() string { return e.err.Error() }
func (e errJoinEmit) Unwrap() error { return e.err }

// inTable reports whether table t's blocks hold permuted value p.
func (x *BoltIndex) inTable(tables *bolt.Bucket, t int, p uint64) (bool, error) {
	_, _, ok, err := x.findEntry(tables, t, p)
	return ok, err
}

// lookupID is lookupBlocks decoding from the restart point before fp
// instead of from the block's start: a pair found by a table after 0
// takes its id from table 0.
func (x *BoltIndex) lookupID(tables *bolt.Bucket, fp Fingerprint) (uint64, bool, error) {
	b, i, ok, err := x.findEntry(tables, 0, x.layout.Permute(0, fp))
	if !ok || err != nil {
		return 0, false, err
	}
	return b.id(i), true, nil
}

// findEntry finds permuted value p in table t's blocks: its block and
// index there, if present.
func (x *BoltIndex) findEntry(tables *bolt.Bucket, t int, p uint64) (block, int, bool, error) {
	key, v := seekBlock(tables.Cursor(), t, p)
	if key == nil {
		return block{}, 0, false, nil
	}
	b, err := x.parseBlock(t, key, v)
	if err != nil {
		return block{}, 0, false, fmt.Errorf("table %d block %x: %w", t, key[1:], err)
	}
	i, e, r := b.seek(p)
	it := blockIter{r: r, code: b.code, cur: e, i: i + 1, n: b.n}
	for {
		if e >= p {
			return b, i, e == p, nil
		}
		if it.i == it.n {
			return block{}, 0, false, nil
		}
		e = it.next()
		i++
	}
}
