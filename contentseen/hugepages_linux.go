package contentseen

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// adviseHuge asks the kernel to back a large array with transparent huge
// pages (madvise MADV_HUGEPAGE: in the usual THP mode, "madvise", the
// kernel gives them only to memory that asks), before anything is written into
// it, so that it is faulted in 2 MiB at a time. MemIndex's tables are read
// at random, a few cache lines per probed prefix: on 4 KiB pages each probe
// also misses the TLB (a 10M-entry 4x16 index is 400 MB, 100,000 pages),
// on 2 MiB pages the whole index fits the TLB's 1,536 entries.
//
// An error (a kernel without transparent huge pages: EINVAL) leaves the
// array on 4 KiB pages, which answer the same, slower.
func adviseHuge(s []uint64) error {
	const page = 4096
	if len(s)*8 < 2*hugePage {
		return nil
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*8)
	// Whole pages inside the array: madvise wants a page-aligned start.
	start := (page - int(uintptr(unsafe.Pointer(unsafe.SliceData(b))))%page) % page
	end := start + (len(b)-start)/page*page
	if err := unix.Madvise(b[start:end], unix.MADV_HUGEPAGE); err != nil {
		return fmt.Errorf("contentseen: madvise huge pages: %w", err)
	}
	return nil
}

const hugePage = 2 << 20
