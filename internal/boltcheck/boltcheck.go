// Package boltcheck reads the page structure of a bbolt file with bounds
// checks before bbolt itself touches it.
//
// bbolt trusts its file: it maps it and follows page IDs, element offsets
// and lengths with unsafe pointer arithmetic, asserting (panicking) when a
// page is not what it expected, and faulting when an offset leads outside
// the mapping. A data directory cut short by a full disk, copied half way or
// hit by bad sectors therefore crashes any program that opens it, and even
// bbolt's own consistency check (Tx.Check) runs in a goroutine where such a
// panic cannot be recovered. Walk reads the file with ReadAt instead and
// checks, page by page, everything bbolt would follow: both meta pages (magic,
// version, checksum, which one is current, as bbolt chooses), the file
// length against the high-water mark, the freelist page and its IDs, and
// every branch and leaf page reachable from the root bucket, nested and
// inline buckets included (header ID, page type, overflow within the file,
// element and key/value ranges within the page, keys in order, each page
// reached once). When it reports nothing, bbolt can open the file and run
// Tx.Check without faulting.
//
// Cost: one read of every reachable page (the whole file, at disk or page
// cache speed) and a set of page IDs in memory (8 bytes a page: 1.2 MB for
// a 600 MB file). It never writes.
//
// The layout read here is bbolt's format version 2 on a little-endian
// machine (bbolt writes native byte order; amd64 and arm64 are little
// endian).
package boltcheck

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
)

// bbolt's on-disk constants (go.etcd.io/bbolt/internal/common).
const (
	magic          = 0xED0CDAED
	version        = 2
	pageHeaderSize = 16
	elemSize       = 16 // branch and leaf page elements are both 16 bytes
	bucketHdrSize  = 16 // InBucket: root pgid, sequence
	noFreelist     = ^uint64(0)

	flagBranch   = 0x01
	flagLeaf     = 0x02
	flagMeta     = 0x04
	flagFreelist = 0x10
	leafBucket   = 0x01

	maxDepth    = 64      // a B+tree of 4 KiB pages is never this deep
	maxProblems = 100     // Walk stops collecting after this many
	maxPageSpan = 1 << 30 // bytes one page with its overflow may span
)

// Problem is one thing wrong with the file, in words a user can act on.
type Problem struct {
	Page uint64 // the page concerned; 0 for the file as a whole
	What string
}

func (p Problem) String() string {
	if p.Page == 0 {
		return p.What
	}
	return fmt.Sprintf("page %d: %s", p.Page, p.What)
}

// Report is what Walk found. It is a plain value.
type Report struct {
	PageSize  int
	Size      int64  // bytes of the file
	HighWater uint64 // pages the current meta says the file has
	Txid      uint64 // the current meta's transaction ID
	Meta      int    // which meta page is current: 0 or 1
	Pages     int    // pages reached from the root bucket (overflow included)
	Buckets   int    // buckets, nested and inline ones included
	Keys      int    // leaf entries, bucket entries included
	Problems  []Problem
	// Truncated is true when Walk stopped collecting at its problem limit.
	Truncated bool
}

// OK reports whether Walk found nothing wrong.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// Err is nil for a sound file, else an error listing the first problems.
func (r *Report) Err() error {
	if r.OK() {
		return nil
	}
	const show = 3
	var b bytes.Buffer
	for i, p := range r.Problems {
		if i == show {
			fmt.Fprintf(&b, "; and %d more", len(r.Problems)-show)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.String())
	}
	return fmt.Errorf("%w: %s", ErrDamaged, b.String())
}

// ErrDamaged is wrapped by Report.Err.
var ErrDamaged = errors.New("damaged bbolt file")

// meta is a decoded meta page.
type meta struct {
	pageSize       uint32
	root, freelist uint64
	pgid, txid     uint64
	err            string // why it is invalid, "" when valid
}

func decodeMeta(b []byte) meta {
	if len(b) < pageHeaderSize+64 {
		return meta{err: "cut short"}
	}
	m := b[pageHeaderSize:]
	le := binary.LittleEndian
	x := meta{
		pageSize: le.Uint32(m[8:]), root: le.Uint64(m[16:]), freelist: le.Uint64(m[32:]),
		pgid: le.Uint64(m[40:]), txid: le.Uint64(m[48:]),
	}
	h := fnv.New64a()
	h.Write(m[:56])
	switch {
	case le.Uint32(m) != magic:
		x.err = "not a bbolt meta page (bad magic number)"
	case le.Uint32(m[4:]) != version:
		x.err = fmt.Sprintf("format version %d, not %d", le.Uint32(m[4:]), version)
	case le.Uint64(m[56:]) != h.Sum64():
		x.err = "checksum mismatch"
	case le.Uint16(b[8:]) != flagMeta:
		x.err = "not flagged as a meta page"
	}
	return x
}

// walker holds the state of one Walk.
type walker struct {
	r        io.ReaderAt
	rep      *Report
	pageSize int
	hwm      uint64
	seen     map[uint64]bool
	visit    Visitor // nil for Walk
}

// Visitor is called by Salvage for every bucket (value nil, seq its
// sequence) and key/value pair it can read, in key order within a bucket,
// a bucket before its contents. path is the bucket's path from the root
// (the bucket itself, for a bucket). The slices are the Visitor's to keep.
// An error stops Salvage.
type Visitor func(path [][]byte, key, value []byte, seq uint64) error

func (w *walker) problem(page uint64, format string, args ...any) {
	if len(w.rep.Problems) >= maxProblems {
		w.rep.Truncated = true
		return
	}
	w.rep.Problems = append(w.rep.Problems, Problem{Page: page, What: fmt.Sprintf(format, args...)})
}

// Walk checks the bbolt file r of size bytes. The error is for a failure to
// read r; what is wrong with the file is in the Report.
func Walk(r io.ReaderAt, size int64) (*Report, error) {
	return walk(r, size, nil)
}

// Salvage is Walk calling visit for everything it can read: the pages of a
// damaged subtree are skipped (and reported), the rest is visited, so a
// tool can copy what survives into a new file. A file cut short is walked
// up to its last whole page.
func Salvage(r io.ReaderAt, size int64, visit Visitor) (*Report, error) {
	return walk(r, size, visit)
}

func walk(r io.ReaderAt, size int64, visit Visitor) (*Report, error) {
	rep := &Report{Size: size}
	w := &walker{r: r, rep: rep, seen: map[uint64]bool{}, visit: visit}
	if size == 0 {
		w.problem(0, "the file is empty (0 bytes)")
		return rep, nil
	}
	m, ok, err := w.chooseMeta(size)
	if err != nil || !ok {
		return rep, err
	}
	rep.PageSize, rep.HighWater, rep.Txid = int(m.pageSize), m.pgid, m.txid
	w.pageSize, w.hwm = int(m.pageSize), m.pgid
	if need := int64(m.pgid) * int64(m.pageSize); m.pgid > uint64(size) || need > size {
		w.problem(0, "the file is cut short: %d bytes, but its %d pages need %d (truncated, or the disk filled up)", size, m.pgid, need)
		w.hwm = uint64(size) / uint64(m.pageSize) // walk what is there
	}
	if m.root < 2 || m.root >= w.hwm {
		w.problem(0, "root bucket page %d outside the file's pages 2..%d", m.root, w.hwm-1)
		return rep, nil
	}
	if m.freelist != noFreelist {
		if err := w.freelist(m.freelist); err != nil {
			return rep, err
		}
	}
	rep.Buckets++
	if err := w.tree(m.root, 0, nil, nil); err != nil {
		return rep, err
	}
	return rep, nil
}

// chooseMeta reads both meta pages and returns the one bbolt would use: the
// valid one with the higher transaction ID. A damaged meta page is a
// problem even when the other one is sound: bbolt would carry on from the
// older state, silently losing the last commit, or overwrite the damage.
func (w *walker) chooseMeta(size int64) (meta, bool, error) {
	buf := make([]byte, 4096)
	n, err := w.r.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return meta{}, false, err
	}
	m0 := decodeMeta(buf[:n])
	// The second meta page sits one page in; its size is the first's, or,
	// when the first is unreadable, one of the sizes bbolt may have used.
	sizes := []int64{int64(m0.pageSize)}
	if m0.err != "" {
		sizes = []int64{4096, 512, 1024, 2048, 8192, 16384, 32768, 65536}
	}
	m1 := meta{err: "cut short"}
	for _, ps := range sizes {
		if ps < 512 || ps > 65536 || ps >= size {
			continue
		}
		n, err := w.r.ReadAt(buf, ps)
		if err != nil && !errors.Is(err, io.EOF) {
			return meta{}, false, err
		}
		if m1 = decodeMeta(buf[:n]); m1.err == "" {
			break
		}
	}
	var cur meta
	switch {
	case m0.err == "" && m1.err == "":
		cur, w.rep.Meta = m0, 0
		if m1.txid > m0.txid {
			cur, w.rep.Meta = m1, 1
		}
	case m0.err == "":
		cur, w.rep.Meta = m0, 0
		w.problem(0, "meta page 1 is damaged (%s); bbolt would fall back to transaction %d of meta page 0", m1.err, m0.txid)
	case m1.err == "":
		cur, w.rep.Meta = m1, 1
		w.problem(0, "meta page 0 is damaged (%s); bbolt would fall back to transaction %d of meta page 1", m0.err, m1.txid)
	default:
		w.problem(0, "not a readable bbolt file: meta page 0: %s; meta page 1: %s", m0.err, m1.err)
		return meta{}, false, nil
	}
	if ps := cur.pageSize; ps < 512 || ps > 65536 || ps&(ps-1) != 0 {
		w.problem(0, "implausible page size %d", ps)
		return meta{}, false, nil
	}
	return cur, true, nil
}

// read returns page id with its overflow pages, or nil after recording a
// problem (or with an error when r fails).
func (w *walker) read(id uint64, wantFlags ...uint16) ([]byte, error) {
	if id < 2 || id >= w.hwm {
		w.problem(id, "page ID outside the file's pages 2..%d", w.hwm-1)
		return nil, nil
	}
	if w.seen[id] {
		w.problem(id, "reached twice (a page shared by two parents, or a cycle)")
		return nil, nil
	}
	w.seen[id] = true
	hdr := make([]byte, w.pageSize)
	if _, err := w.r.ReadAt(hdr, int64(id)*int64(w.pageSize)); err != nil {
		return nil, fmt.Errorf("read page %d: %w", id, err)
	}
	le := binary.LittleEndian
	if got := le.Uint64(hdr); got != id {
		w.problem(id, "identifies itself as page %d (overwritten, zeroed or shifted)", got)
		return nil, nil
	}
	flags := le.Uint16(hdr[8:])
	okFlag := false
	for _, f := range wantFlags {
		okFlag = okFlag || flags == f
	}
	if !okFlag {
		w.problem(id, "page type %#x is not what its parent expects (%s)", flags, flagNames(wantFlags))
		return nil, nil
	}
	overflow := uint64(le.Uint32(hdr[12:]))
	if id+overflow >= w.hwm || (overflow+1)*uint64(w.pageSize) > maxPageSpan {
		w.problem(id, "%d overflow pages run past the file's %d pages", overflow, w.hwm)
		return nil, nil
	}
	for i := uint64(1); i <= overflow; i++ {
		if w.seen[id+i] {
			w.problem(id, "overflow page %d is reached twice", id+i)
			return nil, nil
		}
		w.seen[id+i] = true
	}
	w.rep.Pages += int(overflow) + 1
	if overflow == 0 {
		return hdr, nil
	}
	p := make([]byte, int(overflow+1)*w.pageSize)
	if _, err := w.r.ReadAt(p, int64(id)*int64(w.pageSize)); err != nil {
		return nil, fmt.Errorf("read page %d: %w", id, err)
	}
	return p, nil
}

func flagNames(fs []uint16) string {
	var b bytes.Buffer
	for i, f := range fs {
		if i > 0 {
			b.WriteString(" or ")
		}
		switch f {
		case flagBranch:
			b.WriteString("branch")
		case flagLeaf:
			b.WriteString("leaf")
		case flagFreelist:
			b.WriteString("freelist")
		}
	}
	return b.String()
}

func (w *walker) freelist(id uint64) error {
	p, err := w.read(id, flagFreelist)
	if p == nil || err != nil {
		return err
	}
	le := binary.LittleEndian
	count, start := uint64(le.Uint16(p[10:])), uint64(0)
	if count == 0xFFFF {
		if len(p) < pageHeaderSize+8 {
			w.problem(id, "freelist count cut short")
			return nil
		}
		count, start = le.Uint64(p[pageHeaderSize:]), 1
	}
	if count > uint64(len(p)-pageHeaderSize)/8-start {
		w.problem(id, "freelist of %d page IDs does not fit in its %d bytes", count, len(p))
		return nil
	}
	for i := uint64(0); i < count; i++ {
		free := le.Uint64(p[pageHeaderSize+8*(start+i):])
		if free < 2 || free >= w.hwm {
			w.problem(id, "freelist names page %d, outside the file's pages 2..%d", free, w.hwm-1)
			return nil
		}
	}
	return nil
}

// tree checks the B+tree rooted at page id (a bucket's root, or a branch's
// child) and the buckets nested in its leaves. lower is the smallest key
// the subtree may hold (its separator in the parent), nil for none.
func (w *walker) tree(id uint64, depth int, lower []byte, path [][]byte) error {
	if depth > maxDepth {
		w.problem(id, "buckets or branches nested %d deep", depth)
		return nil
	}
	p, err := w.read(id, flagBranch, flagLeaf)
	if p == nil || err != nil {
		return err
	}
	return w.page(id, p, depth, lower, false, path)
}

// page checks one branch or leaf page held in p (a page of the file, or an
// inline bucket's page inside a value).
func (w *walker) page(id uint64, p []byte, depth int, lower []byte, inline bool, path [][]byte) error {
	le := binary.LittleEndian
	if len(p) < pageHeaderSize {
		w.problem(id, "inline bucket shorter than a page header")
		return nil
	}
	flags, count := le.Uint16(p[8:]), int(le.Uint16(p[10:]))
	if inline && flags != flagLeaf {
		w.problem(id, "an inline bucket's page has type %#x, not leaf", flags)
		return nil
	}
	if pageHeaderSize+count*elemSize > len(p) {
		w.problem(id, "%d elements do not fit in %d bytes", count, len(p))
		return nil
	}
	if flags == flagBranch && count == 0 {
		w.problem(id, "branch page without elements")
		return nil
	}
	var prev []byte
	for i := range count {
		off := pageHeaderSize + i*elemSize
		e := p[off : off+elemSize]
		var pos, ksize, vsize uint64
		if flags == flagBranch {
			pos, ksize = uint64(le.Uint32(e)), uint64(le.Uint32(e[4:]))
		} else {
			pos, ksize, vsize = uint64(le.Uint32(e[4:])), uint64(le.Uint32(e[8:])), uint64(le.Uint32(e[12:]))
		}
		start := uint64(off) + pos
		if end := start + ksize + vsize; end > uint64(len(p)) {
			w.problem(id, "element %d (key %d + value %d bytes at %d) runs past the page's %d bytes", i, ksize, vsize, start, len(p))
			return nil
		}
		key := p[start : start+ksize]
		if ksize == 0 {
			w.problem(id, "element %d has an empty key", i)
			return nil
		}
		if prev != nil && bytes.Compare(prev, key) >= 0 {
			w.problem(id, "keys out of order at element %d", i)
			return nil
		}
		if i == 0 && lower != nil && bytes.Compare(key, lower) < 0 {
			w.problem(id, "first key sorts before its parent's separator")
			return nil
		}
		prev = key
		if flags == flagBranch {
			if err := w.tree(le.Uint64(e[8:]), depth+1, key, path); err != nil {
				return err
			}
			continue
		}
		w.rep.Keys++
		if le.Uint32(e)&leafBucket == 0 {
			if w.visit != nil {
				v := p[start+ksize : start+ksize+vsize]
				if err := w.visit(path, bytes.Clone(key), bytes.Clone(v), 0); err != nil {
					return err
				}
			}
			continue
		}
		w.rep.Buckets++
		v := p[start+ksize : start+ksize+vsize]
		if len(v) < bucketHdrSize {
			w.problem(id, "bucket %q: header of %d bytes, not %d", key, len(v), bucketHdrSize)
			return nil
		}
		if depth > maxDepth {
			w.problem(id, "buckets nested %d deep", depth)
			return nil
		}
		sub := append(path[:len(path):len(path)], bytes.Clone(key))
		if w.visit != nil {
			if err := w.visit(sub, nil, nil, le.Uint64(v[8:])); err != nil {
				return err
			}
		}
		if root := le.Uint64(v); root != 0 {
			if err := w.tree(root, depth+1, nil, sub); err != nil {
				return err
			}
			continue
		}
		// An inline bucket: its page follows the bucket header in the value.
		if err := w.page(id, v[bucketHdrSize:], depth+1, nil, true, sub); err != nil {
			return err
		}
	}
	return nil
}
