//go:build !unix

package crawler

import (
	"errors"
	"os"
	"time"
)

var errLockTimeout = errors.New("crawler: lock timeout")

// lockFile leaves locking to bbolt where flock does not exist: the check
// before bbolt opens the file then races a crawl starting at the same time.
func lockFile(f *os.File, exclusive bool, timeout time.Duration) error { return nil }
