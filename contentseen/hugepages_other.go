//go:build !linux

package contentseen

// adviseHuge does nothing where madvise is not used (see the Linux one).
func adviseHuge([]uint64) error { return nil }
