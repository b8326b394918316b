//go:build !linux

package contentseen

import "errors"

func dropPageCache(path string) error {
	return errors.New("dropping the page cache is only done on Linux")
}
