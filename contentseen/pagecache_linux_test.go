package contentseen

import (
	"fmt"
	"os"
	"syscall"
)

// dropPageCache writes path's dirty pages and asks the kernel to drop its
// pages from the page cache (posix_fadvise POSIX_FADV_DONTNEED, which
// leaves dirty pages alone), for cold-cache measurements without root.
func dropPageCache(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return err
	}
	const fadvDontNeed = 4
	if _, _, errno := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, fadvDontNeed, 0, 0); errno != 0 {
		return fmt.Errorf("fadvise %s: %w", path, errno)
	}
	return nil
}
