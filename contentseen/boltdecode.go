package contentseen

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	bolt "go.etcd.io/bbolt"
)

// The query's decoder of a block's stream (storage format 3). blockIter
// and bitReader keep a 64-bit accumulator of unread bits and refill it; a
// query's loop instead keeps only the bit position of the next entry and
// loads the 64 bits there afresh for each entry. One unaligned load holds
// at least 57 bits from the position on: an entry's code (at most 12
// bits) and the bits after it (61-h, about 38 at ten million) together,
// so the chain from one entry to the next is a load, a table lookup and
// an add, with no refill branch in it (issue 17: the 4x16 k=7 query at
// 10M decodes some 15,000 entries).

// bitsAt returns the bits of s from bit pos on, left-aligned: at least 57
// of them are s's (zeros past its end).
func bitsAt(s []byte, pos uint) uint64 {
	if at := pos >> 3; at+8 <= uint(len(s)) {
		return binary.BigEndian.Uint64(s[at:]) << (pos & 7)
	}
	return bitsAtEnd(s, pos)
}

// bitsAtEnd is bitsAt near the end of s, where 8 bytes do not fit. Not
// inlined: bitsAt is, into the decoding loops.
//
//go:noinline
func bitsAtEnd(s []byte, pos uint) uint64 {
	var w uint64
	at := pos >> 3
	for j := range uint(8) {
		w <<= 8
		if at+j < uint(len(s)) {
			w |= uint64(s[at+j])
		}
	}
	return w << (pos & 7)
}

// readAt returns the k bits (k <= 64) of s at bit pos.
func readAt(s []byte, pos, k uint) uint64 {
	if k > 57 {
		return readAt(s, pos, k-32)<<32 | readAt(s, pos+k-32, 32)
	}
	return bitsAt(s, pos) >> (64 - k) // k == 0: a shift by 64 gives 0
}

// read64At returns the 64 bits of s at bit pos: a restart point.
func read64At(s []byte, pos uint) uint64 {
	if at := pos >> 3; at+9 <= uint(len(s)) {
		sh := pos & 7
		return binary.BigEndian.Uint64(s[at:])<<sh | uint64(s[at+8])>>(8-sh)
	}
	return readAt(s, pos, 64)
}

// seekPos is seek for the position-based decoder: the index and value of
// the last restart point (or the first entry) startFrom allows, the bit
// position of the entry after it, and the cursor on the restart point
// after it.
func (b *block) seekPos(lo uint64) (i int, cur uint64, pos uint, rc restartCursor) {
	i, cur = 0, b.first
	for rc = b.firstRestart(); rc.j < b.nr; rc = b.after(rc) {
		off := b.restartOff(rc.j)
		v := read64At(b.stream, off)
		if !b.startFrom(rc.j, v, lo) {
			break
		}
		i, cur, pos = rc.next, v, off+64
	}
	return i, cur, pos, rc
}

// blockSegment is the part of a query's prefix range in one block: the entries
// of block (key, v) of table t in [lo, hi], compared with p (permuted).
// Its slices point into the read transaction's pages.
type blockSegment struct {
	t         int
	key, v    []byte
	p, lo, hi uint64
}

// segDecoder is a segment being decoded: entry i of block b is e, the
// next entry's bits start at pos, and rc is the next restart point. Its
// entry i is not compared yet; it is done when i reaches b.n or e passes
// the segment's hi.
type segDecoder struct {
	seg *blockSegment
	b   block
	i   int
	e   uint64
	pos uint
	rc  restartCursor
}

func (x *BoltIndex) openSegment(s *blockSegment) (segDecoder, error) {
	b, err := x.parseBlock(s.t, s.key, s.v)
	if err != nil {
		return segDecoder{}, fmt.Errorf("table %d block %x: %w", s.t, s.key[1:], err)
	}
	i, e, pos, rc := b.seekPos(s.lo)
	return segDecoder{seg: s, b: b, i: i, e: e, pos: pos, rc: rc}, nil
}

// scanSegments appends to ms the entries of segs within k of their p,
// two segments at a time: decoding an entry waits on the one before (its
// bits start where the one before ends), and decoding two independent
// streams in one loop lets the processor overlap their chains.
func (x *BoltIndex) scanSegments(tables *bolt.Bucket, segs []blockSegment, k int, ms []Match) ([]Match, error) {
	j := 0
	for ; j+1 < len(segs); j += 2 {
		a, err := x.openSegment(&segs[j])
		if err != nil {
			return ms, err
		}
		b, err := x.openSegment(&segs[j+1])
		if err != nil {
			return ms, err
		}
		if ms, err = x.scanPair(tables, &a, &b, k, ms); err != nil {
			return ms, err
		}
		if ms, err = x.scanRest(tables, &a, k, ms); err != nil {
			return ms, err
		}
		if ms, err = x.scanRest(tables, &b, k, ms); err != nil {
			return ms, err
		}
	}
	if j < len(segs) {
		a, err := x.openSegment(&segs[j])
		if err != nil {
			return ms, err
		}
		return x.scanRest(tables, &a, k, ms)
	}
	return ms, nil
}

// scanPair decodes a and b together until one of them is done, appending
// their matches to ms, and leaves both positioned for scanRest. The
// decoding step is written out for each stream (and in scanRest) so that
// the streams' states stay in registers: a function for it does not
// inline.
func (x *BoltIndex) scanPair(tables *bolt.Bucket, a, b *segDecoder, k int, ms []Match) ([]Match, error) {
	sa, da, ia, ea, pa, na, ra := a.b.stream, &a.b.code.dec, a.i, a.e, a.pos, a.b.n, a.rc.next
	sb, db, ib, eb, pb, nb, rb := b.b.stream, &b.b.code.dec, b.i, b.e, b.pos, b.b.n, b.rc.next
	loa, hia, qa := a.seg.lo, a.seg.hi, a.seg.p
	lob, hib, qb := b.seg.lo, b.seg.hi, b.seg.p
	var err error
	for ia < na && ea <= hia && ib < nb && eb <= hib {
		if d := bits.OnesCount64(ea ^ qa); d <= k && ea >= loa {
			if ms, err = x.segMatch(tables, a, ia, ea, d, ms); err != nil {
				return ms, err
			}
		}
		if d := bits.OnesCount64(eb ^ qb); d <= k && eb >= lob {
			if ms, err = x.segMatch(tables, b, ib, eb, d, ms); err != nil {
				return ms, err
			}
		}
		ia++
		switch {
		case ia == na:
		case ia == ra:
			ea, pa = read64At(sa, pa), pa+64
			a.rc = a.b.after(a.rc)
			ra = a.rc.next
		default:
			var w uint64 // bitsAt, by hand: it does not inline
			if at := pa >> 3; at+8 <= uint(len(sa)) {
				w = binary.BigEndian.Uint64(sa[at:]) << (pa & 7)
			} else {
				w = bitsAtEnd(sa, pa)
			}
			c := da[w>>(64-maxCodeLen)]
			l, sl := uint(c>>8)&0xff, uint(c>>16)&0xff
			var suf uint64
			if l+sl <= 57 {
				suf = w << l >> (64 - sl) // sl == 0: 0
			} else {
				suf = readAt(sa, pa+l, sl) // h below 4 + l: rare
			}
			sym := &symbols[c&0xff]
			ea, pa = ea&sym.keep|sym.set|suf, pa+l+sl
		}
		ib++
		switch {
		case ib == nb:
		case ib == rb:
			eb, pb = read64At(sb, pb), pb+64
			b.rc = b.b.after(b.rc)
			rb = b.rc.next
		default:
			var w uint64 // bitsAt, by hand: it does not inline
			if at := pb >> 3; at+8 <= uint(len(sb)) {
				w = binary.BigEndian.Uint64(sb[at:]) << (pb & 7)
			} else {
				w = bitsAtEnd(sb, pb)
			}
			c := db[w>>(64-maxCodeLen)]
			l, sl := uint(c>>8)&0xff, uint(c>>16)&0xff
			var suf uint64
			if l+sl <= 57 {
				suf = w << l >> (64 - sl)
			} else {
				suf = readAt(sb, pb+l, sl)
			}
			sym := &symbols[c&0xff]
			eb, pb = eb&sym.keep|sym.set|suf, pb+l+sl
		}
	}
	a.i, a.e, a.pos = ia, ea, pa
	b.i, b.e, b.pos = ib, eb, pb
	return ms, nil
}

// scanRest decodes the rest of s, appending its matches to ms.
func (x *BoltIndex) scanRest(tables *bolt.Bucket, s *segDecoder, k int, ms []Match) ([]Match, error) {
	st, dec, i, e, pos, n, rn := s.b.stream, &s.b.code.dec, s.i, s.e, s.pos, s.b.n, s.rc.next
	lo, hi, p := s.seg.lo, s.seg.hi, s.seg.p
	var err error
	for i < n && e <= hi {
		if d := bits.OnesCount64(e ^ p); d <= k && e >= lo {
			if ms, err = x.segMatch(tables, s, i, e, d, ms); err != nil {
				return ms, err
			}
		}
		i++
		switch {
		case i == n:
		case i == rn:
			e, pos = read64At(st, pos), pos+64
			s.rc = s.b.after(s.rc)
			rn = s.rc.next
		default:
			var w uint64 // bitsAt, by hand: it does not inline
			if at := pos >> 3; at+8 <= uint(len(st)) {
				w = binary.BigEndian.Uint64(st[at:]) << (pos & 7)
			} else {
				w = bitsAtEnd(st, pos)
			}
			c := dec[w>>(64-maxCodeLen)]
			l, sl := uint(c>>8)&0xff, uint(c>>16)&0xff
			var suf uint64
			if l+sl <= 57 {
				suf = w << l >> (64 - sl)
			} else {
				suf = readAt(st, pos+l, sl)
			}
			sym := &symbols[c&0xff]
			e, pos = e&sym.keep|sym.set|suf, pos+l+sl
		}
	}
	s.i, s.e, s.pos = i, e, pos
	return ms, nil
}

// segMatch appends entry i of s, e, d bits from the query, to ms unless
// an earlier table found it. Outside table 0 its id comes from table 0.
func (x *BoltIndex) segMatch(tables *bolt.Bucket, s *segDecoder, i int, e uint64, d int, ms []Match) ([]Match, error) {
	t := s.seg.t
	f := x.layout.Unpermute(t, e)
	if hasFingerprint(ms, f) {
		return ms, nil
	}
	if t == 0 {
		return append(ms, Match{ID: s.b.id(i), Fingerprint: f, Distance: d}), nil
	}
	id, ok, err := x.lookupBlocks(tables, f)
	if err != nil {
		return ms, err
	}
	if !ok {
		return ms, fmt.Errorf("table %d holds %v, table 0 does not", t, f)
	}
	return append(ms, Match{ID: id, Fingerprint: f, Distance: d}), nil
}
