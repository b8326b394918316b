package contentseen

import (
	"errors"
	"fmt"
	"os"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// releaseMapped is ReleaseMapped of the index's database. The merger
// calls it after each merge and every releaseSteps steps, for the pages
// dropPages is not given (branch pages, free pages the merge read).
func (x *BoltIndex) releaseMapped() error { return ReleaseMapped(x.db) }

// ReleaseMapped drops db's file pages from this process's page tables:
// madvise(MADV_DONTNEED) over bbolt's read-only shared mapping, which
// leaves the pages in the kernel's page cache. After it, reads fault the
// pages they use back in from the page cache (a minor fault each, which
// maps up to 16 cached neighbours) and the process's resident set is its
// working set again. It loses nothing: the mapping is read-only and
// shared, the file is written with pwrite. The crawler calls it when the
// file pages it has mapped pass a budget, because each commit reads the
// last pages of the buckets it appends to, and fault-around maps the
// freshly written pages around them: without it the process maps in
// nearly everything the crawl stores.
//
// It runs inside a read transaction: bbolt remaps the file (when it grows)
// only when no read transaction is open, so the mapping cannot move
// underneath.
func ReleaseMapped(db *bolt.DB) error {
	return db.View(func(tx *bolt.Tx) error {
		data, size := db.Info().Data, tx.Size()
		if data == 0 || size <= 0 {
			return nil
		}
		if err := madviseDontNeed(data, uint64(size)); err != nil {
			return fmt.Errorf("contentseen: release mapped pages: %w", err)
		}
		return nil
	})
}

// dropPages drops pages (runs of page ids, from replacedPages) from this
// process's mapping and then from the page cache (posix_fadvise DONTNEED
// through f, a descriptor of the database file; the kernel keeps a page
// that is mapped or dirty). The pages a merge step replaced are free once
// it has committed: bbolt reuses them only after every read transaction
// that could see them has ended, and a reader that still reads one faults
// it in again from the file. Those of dropRecent are live, and the next
// reader reads them from the file. Both calls only drop caches, so they
// lose nothing whatever they hit; the merger logs their errors and goes
// on.
func (x *BoltIndex) dropPages(f *os.File, runs [][2]uint64) error {
	if len(runs) == 0 {
		return nil
	}
	return x.db.View(func(tx *bolt.Tx) error {
		info := x.db.Info()
		data, ps, size := info.Data, uint64(info.PageSize), uint64(tx.Size())
		// madvise takes whole pages of the OS, which may be bigger than
		// the file's (a file made where pages are 4 KiB, opened where
		// they are 16 or 64): round out. The neighbours that come along
		// are live pages at worst, and dropping those costs a fault.
		osPage := uint64(unix.Getpagesize())
		var errs []error
		for _, r := range runs {
			off, end := r[0]*ps, (r[0]+r[1])*ps
			if data == 0 || end > size {
				continue // beyond this transaction's file (cannot happen: the file only grows)
			}
			off, end = off&^(osPage-1), (end+osPage-1)&^(osPage-1)
			n := end - off
			if err := madviseDontNeed(data+uintptr(off), n); err != nil {
				errs = append(errs, err)
				break
			}
			if f != nil {
				if err := unix.Fadvise(int(f.Fd()), int64(off), int64(n), unix.FADV_DONTNEED); err != nil {
					errs = append(errs, err)
					break
				}
			}
		}
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("contentseen: drop replaced pages: %w", err)
		}
		return nil
	})
}

// openForAdvice opens the database file read-only for dropPages' fadvise
// (bbolt does not expose its descriptor). nil if it cannot: dropPages
// then only unmaps.
func (x *BoltIndex) openForAdvice() *os.File {
	f, err := os.Open(x.db.Path())
	if err != nil {
		return nil
	}
	return f
}

// madviseDontNeed is madvise(addr, n, MADV_DONTNEED) on bbolt's mapping,
// which bbolt gives as an address (DB.Info), not a slice.
func madviseDontNeed(addr uintptr, n uint64) error {
	if _, _, errno := unix.Syscall(unix.SYS_MADVISE, addr, uintptr(n), unix.MADV_DONTNEED); errno != 0 {
		return errno
	}
	return nil
}
