//go:build !linux

package contentseen

// releaseMapped is a no-op where madvise is not used (see the Linux one).
func (x *BoltIndex) releaseMapped() error { return nil }
