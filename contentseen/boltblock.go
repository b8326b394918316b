package contentseen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"

	bolt "go.etcd.io/bbolt"
)

// Storage formats 3 and 4 of BoltIndex: every table is a sorted run of
// permuted fingerprints cut into compressed blocks. All tables share one
// bucket ("tables"):
//
//	key   table number (1 byte) + the block's first entry (8 bytes,
//	      big-endian)
//	value code version (1 byte); n, the number of entries (2 bytes);
//	      table 0 only: m, the bytes of the coded stream (2 bytes); the
//	      restart section (boltrestart.go): the restart points' count and
//	      bit offsets in the stream (format 4: with the gap in entries
//	      from the one before, and a flag on those that begin a prefix
//	      range); the stream: each entry after the first as the Huffman
//	      code of its symbol — h, the position (0 = most significant) of
//	      the first bit where it differs from the entry before, with the
//	      two bits after h — then its remaining 61-h bits (the bit at h is
//	      1: the run is sorted), except the restart points, written in
//	      full (64 bits); table 0 only: id width w (1 byte) and the n ids,
//	      w bytes each, big-endian
//
// The formats differ only in where restart points go: format 3 at every
// 128th entry, format 4 at the first entry of a prefix range (see
// boltrestart.go). An index records its format and keeps it: blocks a
// merge writes into a format 3 index are format 3.
//
// Only table 0 keeps ids: a match found in another table takes its id
// from table 0 (matches are rare; the saved bytes are in every block).
// Table 0 is always written first, so a fingerprint in another table's
// blocks is in table 0's.
//
// A query finds, per table, the block holding each of its prefixes
// (bbolt's branch pages are the block directory: one key per leaf page,
// in memory once touched; a prefix a few blocks after the last is reached
// by stepping the cursor), then decodes them (boltdecode.go): from the
// restart point that begins the prefix range or the last one before it to
// the end of the range, one load and one table lookup per entry, two
// ranges at a time. Blocks are written only by bulk loads and by merges
// of the delta (boltmerge.go); a merge rewrites a run of adjacent blocks
// with their new entries and cuts it into as few blocks of at most limit
// bytes as hold it.

// formatVersion is recorded under formatKey in the meta bucket, the
// format of a new index. Format 1 (one key per fingerprint) had no version
// key; format 2 stored blocks of uncompressed entries with ids in every
// table and had no delta; format 3 put restart points at every 128th
// entry.
const formatVersion = "4"

// oldestFormat is the oldest storage format this version reads (and
// writes, into an index that has it: format 3 differs only in where its
// blocks put restart points, boltrestart.go).
const oldestFormat = "3"

// maxBlock is the default largest block value in bytes: one full block
// fills a 4 KiB bbolt leaf page (16 bytes of page header, 16 of element
// header and 9 of key: 16 + 25 + 4,055 = 4,096). One block per page packs
// pages full however bbolt groups blocks: it never splits a node of four
// elements or fewer, and always puts at least two on a page, so with
// half-page blocks a node of three took two pages (measured: 90% of leaf
// bytes used after a merge, against 98.7% with page-sized blocks); page-
// sized ones fill an overflow of two or three pages exactly. Bigger blocks
// also save space: each costs its 25 bytes of key and element header plus
// 3 of its own (0.35 bits per entry at 4 KB, twice that at 2 KB, against
// issue 6's budget of 3 bits over the floor, of which the coding takes
// 1.6). They cost a query little, because the restart points bound what
// it decodes per table whatever the block size.
const maxBlock = 4055

// blockHeader is the fixed bytes that start a block: version and count.
// Table 0's blocks have two more (the stream's length), then all blocks
// have their restart points.
const blockHeader = 1 + 2

// restartEvery is the distance between format 3's restart points. A
// restart's bit offset is 16 bits (format 4: 15): block streams must stay
// under 8 KiB (format 4: 4 KiB; maxBlock is 4,055 bytes; tests use less).
const restartEvery = 128

// maxBlockEntries bounds a block's entries: n is 2 bytes, the number of
// restart points 1.
const maxBlockEntries = 255*restartEvery + 1

var tablesBucket = []byte("tables")

// entry is one fingerprint of a table: permuted, with its id (kept on disk
// in table 0 only).
type entry struct{ p, id uint64 }

// block is a parsed block; its slices alias the value.
type block struct {
	n        int
	first    uint64
	stream   []byte
	restarts []byte // the restart section's records (boltrestart.go)
	nr       int    // restart points
	v4       bool   // format 4's restart section
	pre      int    // the table's prefix bits
	code     *hcode
	w        int    // id width, table 0
	ids      []byte // table 0
}

// parseBlock parses the block of table t with key k and value v.
func (x *BoltIndex) parseBlock(t int, k, v []byte) (block, error) {
	if len(k) != 9 || len(v) < blockHeader {
		return block{}, fmt.Errorf("corrupt block of %d bytes", len(v))
	}
	b := block{
		n:     int(binary.BigEndian.Uint16(v[1:])),
		first: binary.BigEndian.Uint64(k[1:]),
		pre:   x.layout.PrefixBits(t),
	}
	if b.n == 0 {
		return block{}, fmt.Errorf("corrupt block: no entries")
	}
	at, m := blockHeader, -1
	if t == 0 {
		if len(v) < at+2 {
			return block{}, fmt.Errorf("corrupt block of %d bytes", len(v))
		}
		m = int(binary.BigEndian.Uint16(v[at:]))
		at += 2
	}
	rb, err := b.parseRestarts(v[at:], x.format >= 4)
	if err != nil {
		return block{}, err
	}
	at += rb
	if m < 0 {
		m = len(v) - at
	}
	if at+m > len(v) {
		return block{}, fmt.Errorf("corrupt block: %d stream bytes in %d", m, len(v))
	}
	b.stream = v[at : at+m]
	if t == 0 {
		rest := v[at+m:]
		if len(rest) < 1 || rest[0] < 1 || rest[0] > 8 || len(rest)-1 != b.n*int(rest[0]) {
			return block{}, fmt.Errorf("corrupt block: id section of %d bytes for %d entries", len(rest), b.n)
		}
		b.w, b.ids = int(rest[0]), rest[1:]
	}
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

// seek returns where to start decoding for entries >= lo: the index and
// value of the last restart point (or the first entry) that startFrom
// allows (at or below lo, or beginning lo's prefix range), a reader
// positioned after it and the cursor on the restart point after it.
func (b *block) seek(lo uint64) (i int, cur uint64, r bitReader, rc restartCursor) {
	return b.seekFrom(lo, 0, b.first, bitReader{b: b.stream}, b.firstRestart())
}

// seekFrom is seek for a decoder already at entry i (value cur, reader r
// after it, next restart point rc) of b: it jumps to the last restart
// point at or below lo if that is after i, else keeps the position.
// Restart points at or before i are not read again.
func (b *block) seekFrom(lo uint64, i int, cur uint64, r bitReader, rc restartCursor) (int, uint64, bitReader, restartCursor) {
	for ; rc.j < b.nr; rc = b.after(rc) {
		off := int(b.restartOff(rc.j))
		rr := bitReader{b: b.stream[min(off>>3, len(b.stream)):]}
		rr.read(uint(off & 7))
		v := rr.read(64)
		if !b.startFrom(rc.j, v, lo) {
			break
		}
		i, cur, r = rc.next, v, rr
	}
	return i, cur, r, rc
}

// blockIter decodes a block's entries in order.
type blockIter struct {
	b    *block
	r    bitReader
	code *hcode
	cur  uint64
	i, n int
	rc   restartCursor // the next restart point
}

func (b *block) iter() blockIter {
	return blockIter{b: b, r: bitReader{b: b.stream}, code: b.code, cur: b.first, n: b.n, rc: b.firstRestart()}
}

// iterAt returns an iterator whose last entry returned was entry i, cur,
// with the reader and restart cursor seek gave.
func (b *block) iterAt(i int, cur uint64, r bitReader, rc restartCursor) blockIter {
	return blockIter{b: b, r: r, code: b.code, cur: cur, i: i + 1, n: b.n, rc: rc}
}

// next returns the next entry; call it at most n times.
func (it *blockIter) next() uint64 {
	if it.i == 0 {
		it.i = 1
		return it.cur
	}
	i := it.i
	it.i++
	r := &it.r
	if i == it.rc.next {
		it.rc = it.b.after(it.rc)
		it.cur = r.read(64)
		return it.cur
	}
	if r.n < 56 {
		r.refill()
	}
	e := it.code.dec[r.acc>>(64-maxCodeLen)]
	l := uint(e>>8) & 0xff
	r.acc <<= l
	r.n -= l
	sym := &symbols[e&0xff]
	s := uint(e>>16) & 0xff
	var suf uint64
	if s <= r.n {
		suf = r.acc >> (64 - s) // s == 0: 0
		r.acc <<= s
		r.n -= s
	} else {
		suf = r.read(s)
	}
	it.cur = it.cur&sym.keep | sym.set | suf
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

// blockKey returns the bucket key of table t's block starting with p.
func blockKey(t int, p uint64) []byte {
	k := make([]byte, 9)
	k[0] = byte(t)
	binary.BigEndian.PutUint64(k[1:], p)
	return k
}

// seekBlock positions c on the block of table t that would hold permuted
// fingerprint p — the last block starting at or before p, or the table's
// first block if p is below all — and returns its key and value; nil if
// the table has no block. The cursor is left on that block, so c.Next
// steps to the next.
func seekBlock(c *bolt.Cursor, t int, p uint64) (k, v []byte) {
	var seek [9]byte
	seek[0] = byte(t)
	binary.BigEndian.PutUint64(seek[1:], p)
	k, v = c.Seek(seek[:])
	if k != nil && bytes.Equal(k, seek[:]) {
		return k, v
	}
	next, nv := k, v
	if k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	if len(k) == 9 && int(k[0]) == t {
		return k, v
	}
	// p is below the table's first block: that block, if table t has one.
	if len(next) == 9 && int(next[0]) == t {
		c.Seek(next)
		return next, nv
	}
	return nil, nil
}

// tableScan finds the blocks of prefix ranges of one table visited in
// increasing order (a multi-probe query's), keeping the block where the
// last one ended so that a range starting in that block or a few after it
// needs no seek. It reads the block after the current one only when the
// current one's last restart point does not settle where a range starts
// or ends: at 10M a block holds four or five prefix ranges, and reading
// the next block's key is a cache miss on a page the query may not need.
type tableScan struct {
	x *BoltIndex
	c *bolt.Cursor
	t int

	key, val []byte // the current block; nil before the first seek
	last     uint64 // the current block's last restart point's value (its first entry's without one): it holds entries up to this one at least
	fetched  bool   // nkey, nval hold the block after the current one, where the cursor is
	nkey     []byte // another table's block or nil past the end: the current one is the last
	nval     []byte
}

// stepBlocks bounds the blocks a tableScan steps over with Next before it
// seeks instead: a step touches one page, a seek descends from the root
// (four pages at 10M, with a binary search in each).
const stepBlocks = 3

// setCurrent makes block (k, v) current.
func (s *tableScan) setCurrent(k, v []byte) error {
	b, err := s.x.parseBlock(s.t, k, v)
	if err != nil {
		return fmt.Errorf("table %d block %x: %w", s.t, k[1:], err)
	}
	s.key, s.val, s.fetched, s.last = k, v, false, b.first
	if b.nr > 0 {
		s.last = read64At(b.stream, b.restartOff(b.nr-1))
	}
	return nil
}

// next returns the first entry of the block after the current one, false
// when the current one is the table's last.
func (s *tableScan) next() (uint64, bool) {
	if !s.fetched {
		s.nkey, s.nval = s.c.Next()
		s.fetched = true
	}
	if len(s.nkey) == 9 && int(s.nkey[0]) == s.t {
		return binary.BigEndian.Uint64(s.nkey[1:]), true
	}
	return 0, false
}

// seek makes the block holding lo's place current; false when the table
// has no block.
func (s *tableScan) seek(lo uint64) (bool, error) {
	k, v := seekBlock(s.c, s.t, lo)
	if k == nil {
		return false, nil
	}
	return true, s.setCurrent(k, v)
}

// place makes current the block holding lo's place: the last one starting
// at or below lo (the table's first if lo is below all). lo must not be
// below the last call's.
func (s *tableScan) place(lo uint64) (bool, error) {
	if s.key == nil {
		return s.seek(lo)
	}
	first := binary.BigEndian.Uint64(s.key[1:])
	for step := 0; lo > s.last; step++ {
		nf, ok := s.next()
		if !ok || lo < nf {
			break
		}
		// Blocks cover about equal spans of keys: seek when lo lies
		// more than stepBlocks of this one's span on.
		if step == stepBlocks || (lo-nf)/max(nf-first, 1) >= stepBlocks {
			return s.seek(lo)
		}
		if err := s.setCurrent(s.nkey, s.nval); err != nil {
			return false, err
		}
		first = nf
	}
	return true, nil
}

// segments appends to segs the parts of prefix range [lo, hi] in each
// block that may hold its entries, to compare with p (permuted); lo must
// not be below the last call's hi.
func (s *tableScan) segments(p, lo, hi uint64, segs []blockSegment) ([]blockSegment, error) {
	if ok, err := s.place(lo); !ok || err != nil {
		return segs, err
	}
	for binary.BigEndian.Uint64(s.key[1:]) <= hi {
		segs = append(segs, blockSegment{t: s.t, key: s.key, v: s.val, p: p, lo: lo, hi: hi})
		if hi < s.last {
			break // the block holds an entry past the range
		}
		if nf, ok := s.next(); !ok || nf > hi {
			break
		}
		if err := s.setCurrent(s.nkey, s.nval); err != nil {
			return segs, err
		}
	}
	return segs, nil
}

// lookupBlocks returns the id stored with fp in table 0's blocks.
func (x *BoltIndex) lookupBlocks(tables *bolt.Bucket, fp Fingerprint) (uint64, bool, error) {
	p := x.layout.Permute(0, fp)
	key, v := seekBlock(tables.Cursor(), 0, p)
	if key == nil {
		return 0, false, nil
	}
	b, err := x.parseBlock(0, key, v)
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

// encodeBlock returns the value of the block of es (sorted, not empty),
// with restart points where rule puts them.
func encodeBlock(es []entry, ver uint8, c *hcode, withIDs bool, rule restartRule) []byte {
	rs := restartPoints(es, rule)
	nr := len(rs)
	v := make([]byte, blockHeader, blockHeader+2+rule.sectionBytes(nr)+len(es)*8)
	v[0] = ver
	binary.BigEndian.PutUint16(v[1:], uint16(len(es)))
	if withIDs {
		v = append(v, 0, 0)
	}
	section := len(v)
	if rule.v4 {
		v = binary.BigEndian.AppendUint16(v, uint16(nr))
	} else {
		v = append(v, byte(nr))
	}
	restarts := len(v) // the records, after the count
	v = append(v, make([]byte, section+rule.sectionBytes(nr)-restarts)...)
	stream := len(v)
	w := bitWriter{b: v}
	j, last := 0, 0
	for i := 1; i < len(es); i++ {
		cur := es[i].p
		if j < nr && rs[j] == i {
			off := uint16(8*(len(w.b)-stream) + int(w.n))
			if rule.v4 {
				if bits.LeadingZeros64(es[i-1].p^cur) < rule.pre {
					off |= rangeStartFlag
				}
				w.b[restarts+3*j] = byte(i - last)
				binary.BigEndian.PutUint16(w.b[restarts+3*j+1:], off)
			} else {
				binary.BigEndian.PutUint16(w.b[restarts+2*j:], off)
			}
			w.write(cur, 64)
			j, last = j+1, i
			continue
		}
		sym, rest := symbolOf(uint(bits.LeadingZeros64(es[i-1].p^cur)), cur)
		w.write(uint64(c.code[sym]), uint(c.lens[sym]))
		w.write(cur, rest)
	}
	v = w.flush()
	if withIDs {
		binary.BigEndian.PutUint16(v[blockHeader:], uint16(len(v)-stream))
		width := idWidth(es)
		v = append(v, byte(width))
		for _, e := range es {
			v = appendID(v, e.id, width)
		}
	}
	return v
}

// fits returns how many entries of es, from the first, one block of at
// most limit bytes holds (at least one), with restart points where rule
// puts them, and adds their symbols to hist.
func fits(es []entry, c *hcode, withIDs bool, limit int, rule restartRule, hist *[hSymbols]uint64) int {
	bitsUsed, maxID := 0, uint64(0)
	n, nr, last := 0, 0, 0
	for i, e := range es {
		var add, sym int
		restart := false
		if i > 0 {
			h := uint(bits.LeadingZeros64(es[i-1].p ^ e.p))
			if restart = rule.at(i, last, h); restart {
				add = 64
			} else {
				var rest uint
				sym, rest = symbolOf(h, e.p)
				add = int(c.lens[sym]) + int(rest)
			}
		}
		nri := nr
		if restart {
			nri++
		}
		size := blockHeader + rule.sectionBytes(nri) + (bitsUsed+add+7)/8
		if withIDs {
			m := maxID | e.id
			size += 2 + 1 + (i+1)*max(1, (bits.Len64(m)+7)/8)
		}
		if i > 0 && (size > limit || i >= maxBlockEntries) {
			break
		}
		if restart {
			nr, last = nri, i
		} else if i > 0 {
			hist[sym]++
		}
		bitsUsed += add
		maxID |= e.id
		n = i + 1
	}
	return n
}

// writeBlocks writes es (sorted, not empty) as blocks of table t of at
// most x.blockLimit bytes, as few as hold them and of about equal counts, coded
// with the table's latest code, and returns how many. It adds the written
// symbols to hist. Keys and values are fresh slices, as bbolt keeps them
// until the commit.
func (x *BoltIndex) writeBlocks(tables *bolt.Bucket, t int, es []entry, hist *[hSymbols]uint64) (int, error) {
	ver, c := x.codes.latest(t)
	// Count the blocks a greedy cut needs, then cut into that many of
	// about equal counts, each no longer than the greedy cut allows.
	nb := x.blocksFor(t, es)
	written := 0
	for start := 0; start < len(es); nb-- {
		target := (len(es) - start + max(nb, 1) - 1) / max(nb, 1)
		n := fits(es[start:start+target], c, t == 0, x.blockLimit, x.restartRule(t), hist)
		if err := tables.Put(blockKey(t, es[start].p), encodeBlock(es[start:start+n], ver, c, t == 0, x.restartRule(t))); err != nil {
			return written, fmt.Errorf("table %d: write block: %w", t, err)
		}
		start += n
		written++
	}
	return written, nil
}

// blocksFor returns how many blocks of table t a greedy cut of es needs.
func (x *BoltIndex) blocksFor(t int, es []entry) int {
	nb, _ := x.greedyFrom(t, es, 0)
	return nb
}

// greedyFrom cuts es[start:] greedily into blocks of table t and returns
// how many and where the last begins. A greedy cut of es up to that last
// block stays the same when entries are appended, so a run that grows at
// its end is counted again from there.
func (x *BoltIndex) greedyFrom(t int, es []entry, start int) (nb, last int) {
	_, c := x.codes.latest(t)
	var scratch [hSymbols]uint64
	last = start
	for i := start; i < len(es); nb++ {
		last = i
		i += fits(es[i:], c, t == 0, x.blockLimit, x.restartRule(t), &scratch)
	}
	return nb, last
}

// mergeTable merges es (sorted by p) into table t. It works on runs of
// adjacent blocks that each receive new entries: a run's old entries and
// its new ones are written again as one sorted run, cut into as few blocks
// as hold them (writeBlocks), so blocks stay nearly full across merges
// instead of splitting into halves each time one overflows. A run whose
// entries no longer fit its blocks takes in up to absorbBlocks following
// blocks that receive nothing, whose room absorbs the overflow. Entries
// already in the table are skipped, so merging the same entries again
// (after a crash) changes nothing. It stops after the run that reaches
// about maxBlocks rewritten blocks (0: no limit) and returns how many
// entries of es it consumed. If rp is not nil, it notes the file pages of
// the blocks it replaces.
func (x *BoltIndex) mergeTable(tables *bolt.Bucket, t int, es []entry, maxBlocks int, hist *[hSymbols]uint64, rp *replacedPages, sc *runScratch) (int, error) {
	if sc == nil {
		sc = new(runScratch)
	}
	buf, old, keys, vals := sc.buf, sc.old, sc.keys, sc.vals
	defer func() {
		clear(vals[:cap(vals)]) // they point into the mapping
		sc.buf, sc.old, sc.keys, sc.vals = buf, old, keys, vals
	}()
	consumed, rewritten := 0, 0
	for consumed < len(es) && (maxBlocks == 0 || rewritten < maxBlocks) {
		rest := es[consumed:]
		c := tables.Cursor()
		key, v := seekBlock(c, t, rest[0].p)
		old, keys, vals = old[:0], keys[:0], vals[:0]
		j := len(rest) // new entries up to rest[j] go into this run
		tail := true   // the run ends the table: all the rest go into it
		// While absorbing, buf holds the run's entries up to old[:bufOld]
		// and rest[:bufNew], and the greedy cut of buf has cutBlocks
		// blocks before cutLast, where its last block begins.
		absorbing, bufOld, bufNew, cutBlocks, cutLast := 0, 0, 0, 0, 0
		buf = buf[:0]
		for key != nil {
			keys = append(keys, bytes.Clone(key))
			b, err := x.parseBlock(t, key, v)
			if err != nil {
				return consumed, fmt.Errorf("table %d block %x: %w", t, key[1:], err)
			}
			old = b.entries(old)
			vals = append(vals, v)
			// The new entries below the next block's first go in this
			// block; the run goes on into the next block if some of the
			// rest go there.
			nk, nv := c.Next()
			if len(nk) != 9 || int(nk[0]) != t {
				j, tail = len(rest), true
				break
			}
			j, tail = lowerBoundEntries(rest, binary.BigEndian.Uint64(nk[1:])), false
			nothing := j == len(rest) || rest[j].p >= nextFirst(c, t)
			if !nothing && maxBlocks > 0 && rewritten+len(keys) >= maxBlocks {
				break // the step is full
			}
			if nothing {
				// The next block receives nothing new. Ending the run
				// here when its entries overflow its blocks adds a
				// block about as empty as the overflow is small: a
				// merge of a small delta (a checkpoint's) made short
				// runs: at 10M the benchmark's last checkpoint took
				// table 0 from 21,450 blocks to 23,697.
				if absorbing == absorbBlocks {
					break
				}
				// The blocks taken in since the last look only add
				// entries at the run's end.
				buf, _ = mergeRun(buf, old[bufOld:], rest[bufNew:j])
				bufOld, bufNew = len(old), j
				nb, last := x.greedyFrom(t, buf, cutLast)
				if cutBlocks+nb <= len(keys) {
					break
				}
				cutBlocks, cutLast = cutBlocks+nb-1, last
				absorbing++
			}
			key, v = nk, nv
		}
		// A run into an empty table or past its last block takes all the
		// rest: bound the new entries to what the step's remaining blocks
		// hold at least, so that a step stays short (at most about twice
		// maxBlocks blocks, with the run's old ones).
		if tail && maxBlocks > 0 {
			j = min(j, max(1, maxBlocks-rewritten)*x.fewestPerBlock())
		}
		var added int
		buf, added = mergeRun(buf[:0], old, rest[:j])
		consumed += j
		if added == 0 {
			continue
		}
		for _, v := range vals {
			rp.note(v) // the pages these blocks leave
		}
		for _, k := range keys {
			if err := tables.Delete(k); err != nil {
				return consumed, fmt.Errorf("table %d: replace block: %w", t, err)
			}
		}
		n, err := x.writeBlocks(tables, t, buf, hist)
		if err != nil {
			return consumed, err
		}
		rewritten += max(n, len(keys))
	}
	return consumed, nil
}

// runScratch is mergeTable's buffers, kept across its calls by a caller
// that makes many (a merge's steps).
type runScratch struct {
	buf, old   []entry
	keys, vals [][]byte
}

// mergeRun appends to buf the sorted union of old and add (both sorted),
// skipping the entries of add already in old (merged before), and returns
// it with how many entries of add it took.
func mergeRun(buf, old, add []entry) ([]entry, int) {
	i, added := 0, 0
	for _, e := range add {
		for ; i < len(old) && old[i].p < e.p; i++ {
			buf = append(buf, old[i])
		}
		if i < len(old) && old[i].p == e.p {
			continue
		}
		buf = append(buf, e)
		added++
	}
	return append(buf, old[i:]...), added
}

// absorbBlocks bounds the blocks receiving nothing that a run takes in to
// absorb its overflow. A block cut full has less room than an entry: a
// bulk-built table needed up to 64 blocks and more to absorb one entry
// (TestBoltSmallMergesKeepBlocksFull, blocks of 50 entries), and a merge
// of a delta much smaller than its tables' blocks would rewrite that many
// per new entry. Past the bound one more block is cheaper; merges of the
// usual delta (N/64 entries, ten a block) cross gaps without it.
const absorbBlocks = 16

// fewestPerBlock is a lower bound on the entries a block of blockLimit
// bytes holds: an entry takes at most 88 bits (a code of 12 and 61 more,
// or a restart point's 64 and its record of up to 24 bits), the header 5
// bytes.
func (x *BoltIndex) fewestPerBlock() int {
	return max(1, (x.blockLimit-blockHeader-2)*8/88)
}

// nextFirst returns the first entry of the block after the cursor's (in
// table t), or the largest uint64 when there is none; the cursor is left
// where it was.
func nextFirst(c *bolt.Cursor, t int) uint64 {
	nk, _ := c.Next()
	if nk == nil {
		return ^uint64(0) // bbolt leaves the cursor on the last item
	}
	c.Prev()
	if len(nk) != 9 || int(nk[0]) != t {
		return ^uint64(0)
	}
	return binary.BigEndian.Uint64(nk[1:])
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
