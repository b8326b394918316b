package contentseen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// Storage format 2 of BoltIndex: every table is a sorted run of permuted
// fingerprints, each with its id, cut into blocks. All tables share one
// bucket ("tables"):
//
//	key   table number (1 byte) + lower bound (8 bytes, big-endian): the
//	      smallest permuted fingerprint the block may hold; 0 for the
//	      table's first block, else the block's first entry
//	value id width w (1 byte, 1..8); the n permuted fingerprints of the
//	      block, sorted (8 bytes each, big-endian); their n ids in the same
//	      order (the low w bytes of each, big-endian), w the fewest bytes
//	      that hold the block's largest id
//
// A block holds the entries from its lower bound up to the next block's.
// A query seeks once per table to the block holding its prefix and scans
// the entries of the prefix range with XOR and popcount, stepping to the
// next block only when the range crosses a boundary. An insert rewrites
// the one block per table its fingerprint falls in and splits a block that
// grows past maxBlock bytes into halves. One key per block rather than per
// fingerprint gives the tables' B+tree some 80 times fewer keys: a write
// that touches a page decodes and re-encodes a few keys, not hundreds, and
// the values pack the fingerprints densely (8 bytes plus the id's bytes).
//
// The value format is the place for issue 6's compressed blocks: a block
// is read only through blockReader and written only by appendBlock and
// insertInto's splice (which a compressed format would replace by a
// decode and appendBlock).

// formatVersion is recorded under formatKey in the meta bucket. Format 1
// (one bbolt key per fingerprint per table, plus an fp->id bucket) had no
// version key.
const formatVersion = "2"

// maxBlock is the default largest block value in bytes. Inserts split a
// block when it grows past it, AddBatch fills blocks up to it. Four full
// blocks fill a 4 KiB bbolt leaf page (16 bytes of page header, 16 of
// element header and 9 of key per block: 16 + 4 × (25 + 992) = 4,084), so
// bulk-loaded pages are full and an insert copies under 1 KiB.
const maxBlock = 992

var tablesBucket = []byte("tables")

// entry is one fingerprint of a table: permuted, with its id.
type entry struct{ p, id uint64 }

// blockReader reads the entries of one block value in place. The
// fingerprints come first and the ids after them, so that a query's scan
// reads 8 bytes per candidate and ids only for matches.
type blockReader struct {
	b      []byte // the fingerprints and ids, after the width byte
	w      int    // id width
	stride int    // 8 + w: bytes per entry
	n      int    // number of entries
}

func readBlock(v []byte) (blockReader, error) {
	if len(v) < 1 || v[0] < 1 || v[0] > 8 || (len(v)-1)%(8+int(v[0])) != 0 {
		return blockReader{}, fmt.Errorf("contentseen: corrupt table block of %d bytes", len(v))
	}
	w := int(v[0])
	return blockReader{b: v[1:], w: w, stride: 8 + w, n: (len(v) - 1) / (8 + w)}, nil
}

func (r blockReader) p(i int) uint64 { return binary.BigEndian.Uint64(r.b[8*i:]) }

func (r blockReader) id(i int) uint64 {
	var id uint64
	at := 8*r.n + i*r.w
	for _, c := range r.b[at : at+r.w] {
		id = id<<8 | uint64(c)
	}
	return id
}

// search returns the first i with p(i) >= v (n if none). The entries of a
// block are spread about evenly between its first and last (permuted
// hashes), so it interpolates and then steps: a few neighbouring entries
// read instead of a binary search's scattered ones (it runs once per table
// per query, on a block not in the CPU cache). Uneven blocks only cost
// steps, at most the block's entries.
func (r blockReader) search(v uint64) int {
	if r.n == 0 || v <= r.p(0) {
		return 0
	}
	first, last := r.p(0), r.p(r.n-1)
	if v > last {
		return r.n
	}
	i := int(float64(v-first) / float64(last-first) * float64(r.n-1))
	i = min(max(i, 1), r.n-1) // p(0) < v <= p(n-1)
	for r.p(i) < v {
		i++
	}
	for r.p(i-1) >= v {
		i--
	}
	return i
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
// block (an empty index). The cursor is left on that block, so c.Next
// steps to the next one.
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

// blockRef is a block as read in a transaction: its key and value, valid
// until the transaction writes that block (bbolt never changes the bytes
// of a value in place; a Put replaces the slice).
type blockRef struct{ key, val []byte }

// scanTable appends to ms every entry of table t within k of fp (permuted
// p) in the prefix range [lo, hi], skipping fingerprints already in ms. It
// also returns the block that holds or would hold p (lo <= p <= hi), for
// SeenTx to insert into without a second seek.
func (x *BoltIndex) scanTable(c *bolt.Cursor, t int, p, lo, hi uint64, k int, ms []Match) ([]Match, blockRef, error) {
	var at blockRef
	key, v := seekBlock(c, t, lo)
	for ; len(key) == 9 && int(key[0]) == t && binary.BigEndian.Uint64(key[1:]) <= hi; key, v = c.Next() {
		if binary.BigEndian.Uint64(key[1:]) <= p {
			at = blockRef{key, v}
		}
		r, err := readBlock(v)
		if err != nil {
			return ms, at, fmt.Errorf("table %d block %x: %w", t, key[1:], err)
		}
		i := r.search(lo)
		for ; i < r.n; i++ {
			e := r.p(i)
			if e > hi {
				return ms, at, nil
			}
			d := bits.OnesCount64(e ^ p)
			if d > k {
				continue
			}
			f := x.layout.Unpermute(t, e)
			if hasFingerprint(ms, f) { // found in an earlier table
				continue
			}
			ms = append(ms, Match{ID: r.id(i), Fingerprint: f, Distance: d})
		}
	}
	return ms, at, nil
}

// lookup returns the id stored with fp, read from table 0.
func (x *BoltIndex) lookup(tables *bolt.Bucket, fp Fingerprint) (uint64, bool, error) {
	p := x.layout.Permute(0, fp)
	key, v := seekBlock(tables.Cursor(), 0, p)
	if key == nil {
		return 0, false, nil
	}
	r, err := readBlock(v)
	if err != nil {
		return 0, false, fmt.Errorf("table 0 block %x: %w", key[1:], err)
	}
	if i := r.search(p); i < r.n && r.p(i) == p {
		return r.id(i), true, nil
	}
	return 0, false, nil
}

// insertEntry inserts e, not stored, into table t. It is mergeTable for
// one entry, with a fast path for the common case: the block has room and
// e's id fits the block's id width, so the new value is the old one with e
// spliced in, one allocation.
func insertEntry(tables *bolt.Bucket, t int, e entry, limit int) error {
	key, v := seekBlock(tables.Cursor(), t, e.p)
	return insertInto(tables, t, blockRef{key, v}, e, limit)
}

// insertInto is insertEntry into at, the block of table t that holds e's
// place (nil key: the table is empty).
func insertInto(tables *bolt.Bucket, t int, at blockRef, e entry, limit int) error {
	key, v := at.key, at.val
	if key == nil {
		return mergeTable(tables, t, []entry{e}, limit)
	}
	r, err := readBlock(v)
	if err != nil {
		return fmt.Errorf("table %d block %x: %w", t, key[1:], err)
	}
	if len(v)+r.stride > limit || idWidth([]entry{e}) > r.w {
		return mergeTable(tables, t, []entry{e}, limit)
	}
	i := r.search(e.p)
	nv := make([]byte, 1, len(v)+r.stride)
	nv[0] = v[0]
	nv = append(nv, r.b[:8*i]...)
	nv = binary.BigEndian.AppendUint64(nv, e.p)
	nv = append(nv, r.b[8*i:8*r.n+r.w*i]...) // fingerprints after e, ids before
	nv = appendID(nv, e.id, r.w)
	nv = append(nv, r.b[8*r.n+r.w*i:]...)
	if err := tables.Put(bytes.Clone(key), nv); err != nil {
		return fmt.Errorf("table %d: write block: %w", t, err)
	}
	return nil
}

// mergeTable inserts es, sorted by p and none of them stored, into table
// t: block by block, each block rewritten once with all the new entries
// that fall in it, and split into blocks of at most limit bytes.
func mergeTable(tables *bolt.Bucket, t int, es []entry, limit int) error {
	var buf []entry
	for len(es) > 0 {
		c := tables.Cursor()
		key, v := seekBlock(c, t, es[0].p)
		var lb uint64 // lower bound of the block; 0 starts the table
		var old blockReader
		if key != nil {
			lb = binary.BigEndian.Uint64(key[1:])
			var err error
			if old, err = readBlock(v); err != nil {
				return fmt.Errorf("table %d block %x: %w", t, key[1:], err)
			}
		}
		// The new entries below the next block's lower bound go here.
		j := len(es)
		if key != nil {
			if nk, _ := c.Next(); len(nk) == 9 && int(nk[0]) == t {
				j = lowerBoundEntries(es, binary.BigEndian.Uint64(nk[1:]))
			}
		}
		// Merge the block's entries with es[:j] (bbolt's v stays valid:
		// nothing was written since the seek).
		buf = buf[:0]
		i := 0
		for _, e := range es[:j] {
			for ; i < old.n && old.p(i) < e.p; i++ {
				buf = append(buf, entry{old.p(i), old.id(i)})
			}
			buf = append(buf, e)
		}
		for ; i < old.n; i++ {
			buf = append(buf, entry{old.p(i), old.id(i)})
		}
		if err := writeBlocks(tables, t, lb, buf, limit); err != nil {
			return err
		}
		es = es[j:]
	}
	return nil
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

// writeBlocks writes es (sorted, not empty) as the block with lower bound
// lb, cut into as few blocks of at most limit bytes as hold them, of
// nearly equal counts: an insert into a full block splits it in halves, a
// bulk load fills blocks. Keys and values are fresh slices, as bbolt keeps
// them until the commit.
func writeBlocks(tables *bolt.Bucket, t int, lb uint64, es []entry, limit int) error {
	w := idWidth(es)
	per := max(1, (limit-1)/(8+w))
	nb := (len(es) + per - 1) / per
	size := (len(es) + nb - 1) / nb
	for start := 0; start < len(es); start += size {
		part := es[start:min(start+size, len(es))]
		if start > 0 {
			lb = part[0].p
		}
		if err := tables.Put(blockKey(t, lb), appendBlock(nil, part)); err != nil {
			return fmt.Errorf("table %d: write block: %w", t, err)
		}
	}
	return nil
}

// appendBlock appends the block value of es (sorted) to v.
func appendBlock(v []byte, es []entry) []byte {
	w := idWidth(es)
	v = slices.Grow(v, 1+len(es)*(8+w))
	v = append(v, byte(w))
	for _, e := range es {
		v = binary.BigEndian.AppendUint64(v, e.p)
	}
	for _, e := range es {
		v = appendID(v, e.id, w)
	}
	return v
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
