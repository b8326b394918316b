//go:build !linux

package contentseen

import "errors"

func dropPageCache(path string) error {
	return errors.New("dropping the page cache is only done on Linux")
}

func cachedPages(path string) ([]bool, error) {
	return nil, errors.New("page cache residency is only read on Linux")
}

func mappedPages(uintptr, int) (int, error) {
	return 0, errors.New("mapped pages are only counted on Linux")
}
