package contentseen

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"unsafe"

	bolt "go.etcd.io/bbolt"
)

// replacedPages collects the file pages under values read in one
// transaction: the blocks one merge step rewrote, the delta entries a trim
// deleted, the records dropRecent drops. bbolt writes a changed leaf to a
// new page and frees the old one; after a merge step commits, the merger
// drops the old pages from the process's mapping and from the page cache
// (dropPages), so that the old copy of a table does not stay resident
// beside the new one while a merge rewrites the whole table. Dropping them from the page cache as
// well matters because of the kernel's fault-around: a query's page fault
// maps up to 16 neighbouring pages that are in the cache, free or not.
type replacedPages struct {
	base, end uintptr // bbolt's mapping during the step's transaction
	pageSize  uintptr
	ids       []uint64
}

// begin starts recording for a transaction of db.
func (r *replacedPages) begin(db *bolt.DB, tx *bolt.Tx) {
	info := db.Info()
	r.base, r.pageSize = info.Data, uintptr(info.PageSize)
	r.end = r.base + uintptr(tx.Size())
	r.ids = r.ids[:0]
}

// note records the pages under v, a value read in the transaction, if it
// lies in the mapping (a value written earlier in the same transaction is
// in memory, not in the file).
func (r *replacedPages) note(v []byte) {
	if r == nil || r.pageSize == 0 || len(v) == 0 {
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(v)))
	if p < r.base || p >= r.end {
		return
	}
	first, last := (p-r.base)/r.pageSize, (p-r.base+uintptr(len(v))-1)/r.pageSize
	for id := first; id <= last; id++ {
		if n := len(r.ids); n == 0 || r.ids[n-1] != uint64(id) {
			r.ids = append(r.ids, uint64(id))
		}
	}
}

// runs returns the recorded pages as sorted runs of consecutive ids:
// (first id, count) pairs.
func (r *replacedPages) runs() [][2]uint64 {
	slices.Sort(r.ids)
	ids := slices.Compact(r.ids)
	var out [][2]uint64
	for _, id := range ids {
		if n := len(out); n > 0 && out[n-1][0]+out[n-1][1] == id {
			out[n-1][1]++
			continue
		}
		out = append(out, [2]uint64{id, 1})
	}
	return out
}

// dropRecent drops from the mapping and the page cache the pages that
// hold the delta's records from x.droppedSeq+1 up to sequence upTo and
// their id records in fps, and moves x.droppedSeq on. The caller holds
// x.mergeMu.
//
// Why: each group commit reads the last leaf of both buckets, and the
// kernel's fault-around maps its cached neighbours too, so the process
// maps in every page the delta and the new id records fill, and keeps
// them: 13 MB of the 10M benchmark's resident peak by the time a merge
// began. Few read them again: the merge's trim of the delta (about 6 MB
// from the disk at 10M), a lookup of an id, a reader older than the last
// merge, a reopen. Pages are live: dropping one costs a read from the file
// at its next use (the last leaf's, at the next commit), nothing more.
// The merger drops every dropEvery records between merges (not while one
// runs) and at each merge's start.
// Walking fps stops after twice the records' count (the crawler's ids are
// a sequence, so their records are together at the end).
func (x *BoltIndex) dropRecent(upTo uint64) error {
	f := x.openForAdvice()
	if f != nil {
		defer f.Close()
	}
	var rp replacedPages
	last := x.droppedSeq
	err := x.db.View(func(tx *bolt.Tx) error {
		top, err := x.top(tx)
		if err != nil {
			return err
		}
		rp.begin(x.db, tx)
		var lo, hi uint64 = math.MaxUint64, 0
		count := 0
		c := top.Bucket(deltaBucket).Cursor()
		for k, v := c.Seek(be64(x.droppedSeq + 1)); len(k) == 8 && binary.BigEndian.Uint64(k) <= upTo; k, v = c.Next() {
			rp.note(v)
			if len(v) == 16 {
				id := binary.BigEndian.Uint64(v[8:])
				lo, hi, count = min(lo, id), max(hi, id), count+1
			}
			last = binary.BigEndian.Uint64(k)
		}
		c = top.Bucket(fpsBucket).Cursor()
		walked := 0
		for k, v := c.Seek(be64(lo)); count > 0 && len(k) == 8 && binary.BigEndian.Uint64(k) <= hi && walked < 2*count; k, v = c.Next() {
			rp.note(v)
			walked++
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("contentseen: find the delta's pages: %w", err)
	}
	x.droppedSeq = last
	return x.dropPages(f, rp.runs())
}

// dropEvery is how many records the delta takes between two dropRecent.
const dropEvery = minDelta / 4
