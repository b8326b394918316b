//go:build !linux

package contentseen

import (
	"os"

	bolt "go.etcd.io/bbolt"
)

// releaseMapped is a no-op where madvise is not used (see the Linux one).
func (x *BoltIndex) releaseMapped() error { return nil }

// ReleaseMapped is a no-op where madvise is not used (see the Linux one).
func ReleaseMapped(*bolt.DB) error { return nil }

// dropPages is a no-op where madvise is not used (see the Linux one).
func (x *BoltIndex) dropPages(*os.File, [][2]uint64) error { return nil }

// openForAdvice returns nil where fadvise is not used.
func (x *BoltIndex) openForAdvice() *os.File { return nil }
