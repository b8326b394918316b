package contentseen

import (
	"slices"
	"unsafe"

	bolt "go.etcd.io/bbolt"
)

// replacedPages collects the file pages that held the blocks one merge
// step rewrote. bbolt writes a changed leaf to a new page and frees the
// old one; after the step commits, the merger drops the old pages from
// the process's mapping and from the page cache (dropPages), so that the
// old copy of a table does not stay resident beside the new one while a
// merge rewrites the whole table. Dropping them from the page cache as
// well matters because of the kernel's fault-around: a query's page fault
// maps up to 16 neighbouring pages that are in the cache, free or not.
type replacedPages struct {
	base, end uintptr // bbolt's mapping during the step's transaction
	pageSize  uintptr
	ids       []uint64
}

// begin starts recording for a write transaction of db.
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
