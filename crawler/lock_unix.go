//go:build unix

package crawler

import (
	"errors"
	"os"
	"syscall"
	"time"
)

var errLockTimeout = errors.New("crawler: lock timeout")

// lockFile takes flock on f, exclusive or shared, as bbolt does (bbolt
// then takes the same lock on the same file, which is a no-op), polling
// until timeout.
func lockFile(f *os.File, exclusive bool, timeout time.Duration) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return err
		}
		if timeout > 0 && time.Now().After(deadline) {
			return errLockTimeout
		}
		time.Sleep(50 * time.Millisecond)
	}
}
