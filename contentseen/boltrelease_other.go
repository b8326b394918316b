//go:build !linux

package contentseen

import "os"

// releaseMapped is a no-op where madvise is not used (see the Linux one).
func (x *BoltIndex) releaseMapped() error { return nil }

// dropPages is a no-op where madvise is not used (see the Linux one).
func (x *BoltIndex) dropPages(*os.File, [][2]uint64) error { return nil }

// openForAdvice returns nil where fadvise is not used.
func (x *BoltIndex) openForAdvice() *os.File { return nil }
