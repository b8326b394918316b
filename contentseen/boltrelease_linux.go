package contentseen

import (
	"fmt"
	"syscall"

	bolt "go.etcd.io/bbolt"
)

// releaseMapped drops the database file's pages from this process's page
// tables: madvise(MADV_DONTNEED) over bbolt's read-only shared mapping,
// which leaves the pages in the kernel's page cache. A merge rewrites
// nearly every block, copy-on-write, so without it the pages of the old
// blocks would stay resident beside the new ones (twice the tables) until
// the kernel wanted the memory back; after it, queries fault the pages
// they use back in from the page cache (a minor fault each) and the
// process's resident set is its working set again.
//
// It runs inside a read transaction: bbolt remaps the file (when it grows)
// only when no read transaction is open, so the mapping cannot move
// underneath.
func (x *BoltIndex) releaseMapped() error {
	return x.db.View(func(tx *bolt.Tx) error {
		data, size := x.db.Info().Data, tx.Size()
		if data == 0 || size <= 0 {
			return nil
		}
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, data, uintptr(size), syscall.MADV_DONTNEED); errno != 0 {
			return fmt.Errorf("contentseen: release mapped pages: %w", errno)
		}
		return nil
	})
}
