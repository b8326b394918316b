package contentseen

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"

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
// fingerprints still in the delta (not yet merged into the blocks) probe
// the Joiner's tables one by one, as JoinPartitions does.
//
// The work is a map over units (table, range of the batch's prefixes; and
// the delta), each depending only on the snapshot it reads and the
// Joiner, and a merge that concatenates their pairs in unit order. JoinTx
// runs the units in order on the caller's goroutine; JoinUnits and
// JoinUnitTx let a caller run them on several goroutines (or machines
// holding a copy of the index) and merge.

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
// lookup in table 0 for each pair reported by another table (in table 0's
// order, one pass per unit). Memory: 8 bytes per batch entry of one unit
// (at most about 64Ki entries) for their permuted values, and the unit's
// pairs. An error from emit stops the join and is returned as is; ctx is
// checked between units.
func (x *BoltIndex) JoinTx(ctx context.Context, tx *bolt.Tx, j *Joiner, emit func(Pair) error) error {
	us, err := x.JoinUnits(j)
	if err != nil {
		return err
	}
	var out []Pair
	for _, u := range us {
		if out, err = x.JoinUnitTx(ctx, tx, j, u, out[:0]); err != nil {
			return err
		}
		for _, p := range out {
			if err := emit(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// JoinUnit is one unit of work of a join against an index: the Joiner's
// table Table, its batch entries From..To-1 in the table's order (whole
// prefix groups), against the index's table Table; or, with Table -1,
// every batch entry against the index's delta.
type JoinUnit struct{ Table, From, To int }

// JoinUnits cuts the join of j against x into units, each depending only
// on the snapshot it runs in and on j: JoinTx's output is their pairs
// (JoinUnitTx) concatenated in this order. Units can run on several
// goroutines, each in its own read transaction, when nothing can write
// the index meanwhile (a database opened read-only), so that they all see
// one snapshot. It fails if j's layout is not the index's.
func (x *BoltIndex) JoinUnits(j *Joiner) ([]JoinUnit, error) {
	if j.layout.Name() != x.layout.Name() {
		return nil, fmt.Errorf("contentseen: join index: batch layout %s, index layout %s", j.layout.Name(), x.layout.Name())
	}
	if j.k > x.layout.K() { // NewJoiner checks this; a guard for the merge's completeness
		return nil, fmt.Errorf("contentseen: join index: k = %d, layout %s finds every match only for k in 0..%d", j.k, x.layout.Name(), x.layout.K())
	}
	var us []JoinUnit
	for t := range j.tables {
		jt := &j.tables[t]
		for s := 0; s < len(jt.fps); {
			e := min(s+joinUnitEntries, len(jt.fps))
			for e < len(jt.fps) && jt.prefixOf(jt.fps[e]) == jt.prefixOf(jt.fps[e-1]) {
				e++
			}
			us = append(us, JoinUnit{Table: t, From: s, To: e})
			s = e
		}
	}
	return append(us, JoinUnit{Table: -1}), nil
}

// JoinUnitTx runs unit u of the join of j against x (from JoinUnits) in
// tx and appends its pairs to out, in the order JoinTx documents. It is
// safe for concurrent use with other units in other transactions.
func (x *BoltIndex) JoinUnitTx(ctx context.Context, tx *bolt.Tx, j *Joiner, u JoinUnit, out []Pair) ([]Pair, error) {
	if j.layout.Name() != x.layout.Name() {
		return out, fmt.Errorf("contentseen: join index: batch layout %s, index layout %s", j.layout.Name(), x.layout.Name())
	}
	if u.Table < -1 || u.Table >= len(j.tables) || u.Table >= 0 && (u.From < 0 || u.From > u.To || u.To > len(j.tables[u.Table].fps)) {
		return out, fmt.Errorf("contentseen: join index: bad unit %+v", u)
	}
	if err := ctx.Err(); err != nil {
		return out, err
	}
	top, err := x.top(tx)
	if err != nil {
		return out, err
	}
	tables := top.Bucket(tablesBucket)
	if tables == nil {
		return out, fmt.Errorf("contentseen: bucket %q/%q missing", x.bucket, tablesBucket)
	}
	if u.Table == -1 {
		// The delta in tx's own snapshot rather than the mirror in
		// memory: it is read whole anyway, it is exact for any
		// transaction (a writer's own entries, a reader older than the
		// last merge), and it needs no lock while the join runs.
		if out, err = x.joinDelta(tables, top.Bucket(deltaBucket), j, out); err != nil {
			return out, fmt.Errorf("contentseen: join index: delta: %w", err)
		}
		return out, nil
	}
	t := u.Table
	pb := make([]uint64, u.To-u.From)
	for i, fp := range j.tables[t].fps[u.From:u.To] {
		pb[i] = x.layout.Permute(t, fp)
	}
	if out, err = x.joinRange(tables, j, t, pb, u.From, u.To, out); err != nil {
		return out, fmt.Errorf("contentseen: join index: table %d: %w", t, err)
	}
	return out, nil
}

// joinRange is the map step of one unit: table t of the index against the
// batch entries s..e-1 of the Joiner's table t (whole prefix groups), pb
// their permuted values (pb[0] is entry s's). It appends the unit's pairs
// to out, in the order JoinTx documents.
func (x *BoltIndex) joinRange(tables *bolt.Bucket, j *Joiner, t int, pb []uint64, s, e int, out []Pair) (_ []Pair, err error) {
	// Pairs of tables after 0 take their ids from table 0: looked up
	// together at the end, in table 0's order, by one pass of a cursor.
	var pend []pendingID
	defer func() {
		if err == nil && len(pend) > 0 {
			err = x.resolveIDs(tables, pend, out)
		}
	}()
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
		rc     restartCursor // b's next restart point after i
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
		lo := pb[g-s] &^ low
		hi := lo | low
		ge := g + 1
		for ge < e && pb[ge-s]&^low == lo {
			ge++
		}
		group := pb[g-s : ge-s]

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
			i, cur, r, rc = b.seek(lo)
		case cur < lo:
			i, cur, r, rc = b.seekFrom(lo, i, cur, r, rc)
		}

		// Decode the prefix range. The decoding loop of blockIter.next by
		// hand, with the reader's state in local variables (registers):
		// this loop is most of a join.
		dec := &b.code.dec
		buf, pos, acc, nb := r.b, r.pos, r.acc, r.n
		for cur <= hi {
			if cur >= lo {
				// Four candidates at a time: one branch per four when none
				// is within k (the batch's prefix groups hold |B|/2^p
				// entries, about 15 for a 1M batch with 16-bit prefixes).
				gi := 0
				for ; gi+4 <= len(group); gi += 4 {
					q := group[gi : gi+4 : gi+4]
					d0, d1 := bits.OnesCount64(cur^q[0]), bits.OnesCount64(cur^q[1])
					d2, d3 := bits.OnesCount64(cur^q[2]), bits.OnesCount64(cur^q[3])
					if min(d0, d1, d2, d3) > k {
						continue
					}
					for n, d := range [4]int{d0, d1, d2, d3} {
						if d <= k {
							out, pend = x.joinPair(j, t, &b, i, cur, g+gi+n, d, out, pend)
						}
					}
				}
				for ; gi < len(group); gi++ {
					if d := bits.OnesCount64(cur ^ group[gi]); d <= k {
						out, pend = x.joinPair(j, t, &b, i, cur, g+gi, d, out, pend)
					}
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
				rc = b.firstRestart()
				buf, pos, acc, nb = b.stream, 0, 0, 0
				continue
			}
			if i == rc.next {
				rc = b.after(rc)
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
			l := uint(dd>>8) & 0xff
			acc <<= l
			nb -= l
			sym := &symbols[dd&0xff]
			var suf uint64
			if sl := uint(dd >> 16); sl <= nb {
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

// joinPair appends the pair of stored entry i of b (permuted value e, in
// table t) and the batch entry at position bi of the Joiner's table t, d
// bits apart, unless an earlier table reports it. Outside table 0 the
// pair's stored id is left for resolveIDs, noted in pend.
func (x *BoltIndex) joinPair(j *Joiner, t int, b *block, i int, e uint64, bi, d int, out []Pair, pend []pendingID) ([]Pair, []pendingID) {
	jt := &j.tables[t]
	f := x.layout.Unpermute(t, e)
	if j.earlierAgree(t, jt.fps[bi], f) {
		return out, pend
	}
	var id uint64
	if t == 0 {
		id = b.id(i)
	} else {
		pend = append(pend, pendingID{p: x.layout.Permute(0, f), at: len(out)})
	}
	return append(out, Pair{BatchID: j.ids[jt.bis[bi]], StoredID: id, Distance: d}), pend
}

// pendingID is a pair whose stored id is still to be read from table 0:
// the stored fingerprint permuted for table 0, and the pair's index.
type pendingID struct {
	p  uint64
	at int
}

// resolveIDs sets the stored id of each pending pair in out from table 0,
// visiting the lookups in table 0's order: the cursor steps forward (or
// seeks) and decoding starts at the restart point before each.
func (x *BoltIndex) resolveIDs(tables *bolt.Bucket, pend []pendingID, out []Pair) error {
	slices.SortFunc(pend, func(a, b pendingID) int { return cmp.Compare(a.p, b.p) })
	c := tables.Cursor()
	next := func() ([]byte, []byte) {
		k, v := c.Next()
		if len(k) != 9 || k[0] != 0 {
			return nil, nil
		}
		return k, v
	}
	var (
		b      block
		loaded bool
		nk, nv []byte
		err    error
	)
	for _, q := range pend {
		if !loaded || nk != nil && binary.BigEndian.Uint64(nk[1:]) <= q.p {
			var key, v []byte
			for step := 0; loaded && step < joinStepBlocks && nk != nil && binary.BigEndian.Uint64(nk[1:]) <= q.p; step++ {
				key, v = nk, nv
				nk, nv = next()
			}
			if !loaded || nk != nil && binary.BigEndian.Uint64(nk[1:]) <= q.p {
				if key, v = seekBlock(c, 0, q.p); key == nil {
					return fmt.Errorf("holds %v, table 0 is empty", x.layout.Unpermute(0, q.p))
				}
				nk, nv = next()
			}
			if b, err = x.parseBlock(0, key, v); err != nil {
				return fmt.Errorf("table 0 block %x: %w", key[1:], err)
			}
			loaded = true
		}
		i, e, r, rc := b.seek(q.p)
		it := b.iterAt(i, e, r, rc)
		for e < q.p && it.i < it.n {
			e = it.next()
			i++
		}
		if e != q.p {
			return fmt.Errorf("holds %v, table 0 does not", x.layout.Unpermute(0, q.p))
		}
		out[q.at].StoredID = b.id(i)
	}
	return nil
}

// joinDelta probes j with every entry of the delta bucket (in sequence
// order) and appends its pairs to out, except those the blocks reported: an entry
// a merge has already written into the blocks of the table that reports
// the pair (a snapshot taken during a merge holds an entry both in the
// delta and in the tables merged so far).
func (x *BoltIndex) joinDelta(tables, delta *bolt.Bucket, j *Joiner, out []Pair) ([]Pair, error) {
	if delta == nil {
		return out, fmt.Errorf("bucket %q/%q missing", x.bucket, deltaBucket)
	}
	c := delta.Cursor()
	for key, v := c.First(); key != nil; key, v = c.Next() {
		if len(key) != 8 || len(v) != 16 {
			return out, fmt.Errorf("corrupt delta entry %x", key)
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
					return out, err
				}
				if in {
					continue
				}
				out = append(out, Pair{BatchID: j.ids[jt.bis[int(lo)+n]], StoredID: id, Distance: d})
			}
		}
	}
	return out, nil
}

// inTable reports whether table t's blocks hold permuted value p.
func (x *BoltIndex) inTable(tables *bolt.Bucket, t int, p uint64) (bool, error) {
	_, _, ok, err := x.findEntry(tables, t, p)
	return ok, err
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
	i, e, r, rc := b.seek(p)
	it := b.iterAt(i, e, r, rc)
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
