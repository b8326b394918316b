package contentseen

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"
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

// cachedPages returns which of path's pages are in the page cache
// (mincore over a mapping of the file of its own). On tmpfs and ramfs the
// page cache is the file's only copy, which fadvise cannot drop: an error.
func cachedPages(path string) ([]bool, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return nil, err
	}
	const tmpfsMagic, ramfsMagic = 0x01021994, 0x858458f6
	if st.Type == tmpfsMagic || st.Type == ramfsMagic {
		return nil, fmt.Errorf("%s is in memory (tmpfs or ramfs): its pages cannot leave the page cache", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	defer syscall.Munmap(m)
	ps := os.Getpagesize()
	vec := make([]byte, (len(m)+ps-1)/ps)
	if _, _, errno := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		return nil, fmt.Errorf("mincore %s: %w", path, errno)
	}
	in := make([]bool, len(vec))
	for i, v := range vec {
		in[i] = v&1 == 1
	}
	return in, nil
}

// mappedPages counts the pages of [addr, addr+n) that this process has
// mapped in (the present bit of /proc/self/pagemap).
func mappedPages(addr uintptr, n int) (int, error) {
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	ps := uintptr(os.Getpagesize())
	first, last := addr/ps, (addr+uintptr(n)-1)/ps
	buf := make([]byte, 8*(last-first+1))
	if _, err := f.ReadAt(buf, int64(first*8)); err != nil {
		return 0, err
	}
	count := 0
	for i := 0; i < len(buf); i += 8 {
		if buf[i+7]&0x80 != 0 { // bit 63, little-endian
			count++
		}
	}
	return count, nil
}
