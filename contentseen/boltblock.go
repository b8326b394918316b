package contentseen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"

	bolt "go.etcd.io/bbolt"
)

// Storage format 3 of BoltIndex: every table is a sorted run of permuted
// fingerprints cut into compressed blocks. All tables share one bucket
// ("tables"):
//
//	key   table number (1 byte) + lower bound (8 bytes, big-endian): the
//	      smallest permuted fingerprint the block may hold; 0 for the
//	      table's first block, else the block's first entry
//	value code version (1 byte); n, the number of entries (2 bytes);
//	      m, the bytes of the coded stream (2 bytes); the first entry in
//	      full (8 bytes); the stream: each next entry as the Huffman code
//	      of h, the position (0 = most significant) of the first bit where
//	      it differs from the entry before, then its 63-h bits after h
//	      (the bit at h is 1: the run is sorted); table 0 only: id width w
//	      (1 byte) and the n ids, w bytes each, big-endian
//
// Only table 0 keeps ids: a match found in another table takes its id
// from table 0 (matches are rare; the saved bytes are in every block).
// Table 0 is always written first, so a fingerprint in another table's
// blocks is in table 0's.
//
// A query seeks once per table to the block holding its prefix (bbolt's
// branch pages are the block directory: one key per leaf page, in memory
// once touched) and decodes entries from the block's start until the end
// of the prefix range, a table lookup per h. Blocks are written only by
// bulk loads and by merges of the delta (boltmerge.go); a merge rewrites a
// block with its new entries and cuts it into blocks of at most limit
// bytes.

// formatVersion is recorded under formatKey in the meta bucket. Format 1
// (one key per fingerprint) had no version key; format 2 stored blocks of
// uncompressed entries with ids in every table and had no delta.
const formatVersion = "3"

// maxBlock is the default largest block value in bytes. Four full blocks
// fill a 4 KiB bbolt leaf page (16 bytes of page header, 16 of element
// header and 9 of key per block: 16 + 4 × (25 + 992) = 4,084), so
// bulk-loaded pages are full; a query decodes half a block per table on
// average (about 90 entries at 10M).
const maxBlock = 992

// blockHeader is the bytes before a block's stream.
const blockHeader = 1 + 2 + 2 + 8

var tablesBucket = []byte("tables")

// entry is one fingerprint of a table: permuted, with its id (kept on disk
// in table 0 only).
type entry struct{ p, id uint64 }

// block is a parsed block value; its slices alias the value.
type block struct {
	n      int
	first  uint64
	stream []byte
	code   *hcode
	w      int    // id width, table 0
	ids    []byte // table 0
}

// parseBlock parses a block value of table t.
func (x *BoltIndex) parseBlock(t int, v []byte) (block, error) {
	if len(v) < blockHeader {
		return block{}, fmt.Errorf("corrupt block of %d bytes", len(v))
	}
	b := block{
		n:     int(binary.BigEndian.Uint16(v[1:])),
		first: binary.BigEndian.Uint64(v[5:]),
	}
	m := int(binary.BigEndian.Uint16(v[3:]))
	if b.n == 0 || blockHeader+m > len(v) {
		return block{}, fmt.Errorf("corrupt block: %d entries, %d stream bytes in %d", b.n, m, len(v))
	}
	b.stream = v[blockHeader : blockHeader+m]
	if t == 0 {
		rest := v[blockHeader+m:]
		if len(rest) < 1 || rest[0] < 1 || rest[0] > 8 || len(rest)-1 != b.n*int(rest[0]) {
			return block{}, fmt.Errorf("corrupt block: id section of %d bytes for %d entries", len(rest), b.n)
		}
		b.w, b.ids = int(rest[0]), rest[1:]
	}
	var err error
	b.code, err = x.codes.get(t, v[0])
	return b, err
}

// id returns the id of entry i of a table 0 block.
func (b *block) id(i int) uint64 {
	var id uint64
	for _, c := range b.ids[i*b.w : (i+1)*b.w] {
		id = id<<8 | uint64(c)
	}
	return id
}

// blockIter decodes a block's entries in order.
type blockIter struct {
	r    bitReader
	code *hcode
	cur  uint64
	i, n int
}

func (b *block) iter() blockIter {
	return blockIter{r: bitReader{b: b.stream}, code: b.code, cur: b.first, n: b.n}
}

// next returns the next entry; call it at most n times.
func (it *blockIter) next() uint64 {
	if it.i == 0 {
		it.i = 1
		return it.cur
	}
	it.i++
	r := &it.r
	if r.n < 56 {
		r.refill()
	}
	e := it.code.dec[r.acc>>(64-maxCodeLen)]
	l, h := uint(e>>8), uint(e&63)
	r.acc <<= l
	r.n -= l
	s := 63 - h
	var suf uint64
	if s <= r.n {
		suf = r.acc >> (64 - s) // s == 0: 0
		r.acc <<= s
		r.n -= s
	} else {
		suf = r.read(s)
	}
	it.cur = it.cur&^(^uint64(0)>>h) | 1<<s | suf
	return it.cur
}

// entries appends all entries of b to es (ids 0 outside table 0).
func (b *block) entries(es []entry) []entry {
	it := b.iter()
	for i := range b.n {
		e := entry{p: it.next()}
		if b.ids != nil {
			e.id = b.id(i)
		}
		es = append(es, e)
	}
	return es
}

// blockKey returns the bucket key of table t's block with lower bound lb.
func blockKey(t int, lb uint64) []byte {
	k := make([]byte, 9)
	k[0] = byte(t)
	binary.BigEndian.PutUint64(k[1:], lb)
	return k
}

// seekBlock positions c on the block of table t that would hold permuted
// fingerprint p and returns its key and value; nil if the table has no
// block. The cursor is left on that block, so c.Next steps to the next.
func seekBlock(c *bolt.Cursor, t int, p uint64) (k, v []byte) {
	var seek [9]byte
	seek[0] = byte(t)
	binary.BigEndian.PutUint64(seek[1:], p)
	k, v = c.Seek(seek[:])
	if k != nil && bytes.Equal(k, seek[:]) {
		return k, v
	}
	// The block before the first key past p; the table's first block has
	// lower bound 0, so it is table t's unless the table is empty.
	if k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	if len(k) != 9 || int(k[0]) != t {
		return nil, nil
	}
	return k, v
}

// scanTable appends to ms every entry of table t within k of fp (permuted
// p) in the prefix range [lo, hi], skipping fingerprints already in ms.
// Matches outside table 0 get their ids from table 0.
func (x *BoltIndex) scanTable(tables *bolt.Bucket, c *bolt.Cursor, t int, p, lo, hi uint64, k int, ms []Match) ([]Match, error) {
	key, v := seekBlock(c, t, lo)
	for ; len(key) == 9 && int(key[0]) == t && binary.BigEndian.Uint64(key[1:]) <= hi; key, v = c.Next() {
		b, err := x.parseBlock(t, v)
		if err != nil {
			return ms, fmt.Errorf("table %d block %x: %w", t, key[1:], err)
		}
		it := b.iter()
		for i := range b.n {
			e := it.next()
			if e < lo {
				continue
			}
			if e > hi {
				return ms, nil
			}
			d := bits.OnesCount64(e ^ p)
			if d > k {
				continue
			}
			f := x.layout.Unpermute(t, e)
			if hasFingerprint(ms, f) { // found in an earlier table
				continue
			}
			var id uint64
			if t == 0 {
				id = b.id(i)
			} else {
				var ok bool
				if id, ok, err = x.lookupBlocks(tables, f); err != nil {
					return ms, err
				} else if !ok {
					return ms, fmt.Errorf("table %d holds %v, table 0 does not", t, f)
				}
			}
			ms = append(ms, Match{ID: id, Fingerprint: f, Distance: d})
		}
	}
	return ms, nil
}

// lookupBlocks returns the id stored with fp in table 0's blocks.
func (x *BoltIndex) lookupBlocks(tables *bolt.Bucket, fp Fingerprint) (uint64, bool, error) {
	p := x.layout.Permute(0, fp)
	key, v := seekBlock(tables.Cursor(), 0, p)
	if key == nil {
		return 0, false, nil
	}
	b, err := x.parseBlock(0, v)
	if err != nil {
		return 0, false, fmt.Errorf("table 0 block %x: %w", key[1:], err)
	}
	it := b.iter()
	for i := range b.n {
		switch e := it.next(); {
		case e == p:
			return b.id(i), true, nil
		case e > p:
			return 0, false, nil
		}
	}
	return 0, false, nil
}

// encodeBlock appends the block value of es (sorted, not empty) to v.
func encodeBlock(v []byte, es []entry, ver uint8, c *hcode, withIDs bool) []byte {
	start := len(v)
	v = append(v, ver, 0, 0, 0, 0)
	binary.BigEndian.PutUint16(v[start+1:], uint16(len(es)))
	v = binary.BigEndian.AppendUint64(v, es[0].p)
	w := bitWriter{b: v}
	for i := 1; i < len(es); i++ {
		prev, cur := es[i-1].p, es[i].p
		h := uint(bits.LeadingZeros64(prev ^ cur))
		w.write(uint64(c.code[h]), uint(c.lens[h]))
		w.write(cur, 63-h)
	}
	v = w.flush()
	binary.BigEndian.PutUint16(v[start+3:], uint16(len(v)-start-blockHeader))
	if withIDs {
		width := idWidth(es)
		v = append(v, byte(width))
		for _, e := range es {
			v = appendID(v, e.id, width)
		}
	}
	return v
}

// fits returns how many entries of es, from the first, one block of at
// most limit bytes holds (at least one), and adds their h to hist.
func fits(es []entry, c *hcode, withIDs bool, limit int, hist *[hSymbols]uint64) int {
	bitsUsed, maxID := 0, uint64(0)
	n := 0
	for i, e := range es {
		var add int
		var h uint
		if i > 0 {
			h = uint(bits.LeadingZeros64(es[i-1].p ^ e.p))
			add = int(c.lens[h]) + 63 - int(h)
		}
		size := blockHeader + (bitsUsed+add+7)/8
		if withIDs {
			m := maxID | e.id
			size += 1 + (i+1)*max(1, (bits.Len64(m)+7)/8)
		}
		if i > 0 && (size > limit || i >= 0xffff) {
			break
		}
		if i > 0 {
			hist[h]++
		}
		bitsUsed += add
		maxID |= e.id
		n = i + 1
	}
	return n
}

// writeBlocks writes es (sorted, not empty) as table t's block with lower
// bound lb, cut into as few blocks of at most limit bytes as hold them, of
// about equal counts, coded with the table's latest code. It adds the
// written h values to hist. Keys and values are fresh slices, as bbolt
// keeps them until the commit.
func (x *BoltIndex) writeBlocks(tables *bolt.Bucket, t int, lb uint64, es []entry, limit int, hist *[hSymbols]uint64) error {
	ver, c := x.codes.latest(t)
	var scratch [hSymbols]uint64
	// Count the blocks a greedy cut needs, then cut into that many of
	// about equal counts, each no longer than the greedy cut allows.
	nb := 0
	for rest := es; len(rest) > 0; nb++ {
		rest = rest[fits(rest, c, t == 0, limit, &scratch):]
	}
	for start := 0; start < len(es); nb-- {
		target := (len(es) - start + max(nb, 1) - 1) / max(nb, 1)
		n := min(target, fits(es[start:min(start+target, len(es))], c, t == 0, limit, hist))
		if start > 0 {
			lb = es[start].p
		}
		if err := tables.Put(blockKey(t, lb), encodeBlock(nil, es[start:start+n], ver, c, t == 0)); err != nil {
			return fmt.Errorf("table %d: write block: %w", t, err)
		}
		start += n
	}
	return nil
}

// mergeTable merges es (sorted by p) into table t, block by block, each
// block rewritten once with the entries that fall in it; entries already
// in the table are skipped, so merging the same entries again (after a
// crash) changes nothing. It stops after rewriting about maxBlocks blocks
// (0: no limit) and returns how many entries of es it consumed.
func (x *BoltIndex) mergeTable(tables *bolt.Bucket, t int, es []entry, limit, maxBlocks int, hist *[hSymbols]uint64) (int, error) {
	var buf, old []entry
	consumed, rewritten := 0, 0
	for consumed < len(es) && (maxBlocks == 0 || rewritten < maxBlocks) {
		rest := es[consumed:]
		c := tables.Cursor()
		key, v := seekBlock(c, t, rest[0].p)
		var lb uint64 // lower bound of the block; 0 starts the table
		old = old[:0]
		if key != nil {
			lb = binary.BigEndian.Uint64(key[1:])
			b, err := x.parseBlock(t, v)
			if err != nil {
				return consumed, fmt.Errorf("table %d block %x: %w", t, key[1:], err)
			}
			old = b.entries(old)
		}
		// The new entries below the next block's lower bound go here.
		j := len(rest)
		if key != nil {
			if nk, _ := c.Next(); len(nk) == 9 && int(nk[0]) == t {
				j = lowerBoundEntries(rest, binary.BigEndian.Uint64(nk[1:]))
			}
		}
		buf = buf[:0]
		i, added := 0, 0
		for _, e := range rest[:j] {
			for ; i < len(old) && old[i].p < e.p; i++ {
				buf = append(buf, old[i])
			}
			if i < len(old) && old[i].p == e.p {
				continue // merged before
			}
			buf = append(buf, e)
			added++
		}
		buf = append(buf, old[i:]...)
		consumed += j
		if added == 0 {
			continue
		}
		if err := x.writeBlocks(tables, t, lb, buf, limit, hist); err != nil {
			return consumed, err
		}
		rewritten++
	}
	return consumed, nil
}

// lowerBoundEntries returns the first i with es[i].p >= v.
func lowerBoundEntries(es []entry, v uint64) int {
	lo, hi := 0, len(es)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if es[m].p < v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// appendID appends the low w bytes of id, big-endian.
func appendID(v []byte, id uint64, w int) []byte {
	for s := (w - 1) * 8; s >= 0; s -= 8 {
		v = append(v, byte(id>>uint(s)))
	}
	return v
}

// idWidth returns the bytes needed for the largest id of es (at least 1).
func idWidth(es []entry) int {
	var m uint64
	for _, e := range es {
		m |= e.id
	}
	return max(1, (bits.Len64(m)+7)/8)
}
