package crawler

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/internal/boltcheck"
)

// ErrDamaged is wrapped by the error of every open or read of a data
// directory whose crawl.db is damaged (cut short, zeroed, overwritten). The
// error names the file, what is wrong and what to do; the file was not
// written to.
var ErrDamaged = errors.New("crawler: damaged data directory")

// DamageError says what is wrong with a data directory. It wraps
// ErrDamaged.
type DamageError struct {
	Dir, File string
	What      string // the first problems found, in words
}

func (e *DamageError) Error() string {
	return fmt.Sprintf("%s is damaged: %s; nothing was written to it. "+
		"`crawl check --data %s` lists what is wrong; `crawl repair --data %s --out NEWDIR` copies what can be read into a new data directory",
		e.File, e.What, e.Dir, e.Dir)
}

func (e *DamageError) Unwrap() error { return ErrDamaged }

func damaged(dir, file string, what error) error {
	msg := what.Error()
	msg = strings.TrimPrefix(msg, boltcheck.ErrDamaged.Error()+": ")
	return &DamageError{Dir: dir, File: file, What: msg}
}

// openDB opens the bbolt file of data directory dir after checking it, and
// returns it only if sound, with the report of the structure walk (nil for
// a new or empty file, which has nothing to walk). It takes the file's lock
// itself (shared for readOnly, exclusive otherwise; ErrLocked after
// timeout, see lockDir) and keeps it: it reads every page bbolt would
// follow with bounds checks (boltcheck.Walk), then lets bbolt open the same
// locked file and runs bbolt's own consistency check (Tx.Check) in a read
// transaction. Nothing is written before both pass. A damaged file gives a
// DamageError and, when the walk found it, the walk's report. A file that
// does not exist is created (bbolt initialises it) unless readOnly; one of
// 0 bytes is initialised too. Cost: the walk reads the file once, Tx.Check
// reads it again through bbolt's mapping (from the page cache).
func openDB(dir string, readOnly bool, timeout time.Duration) (db *bolt.DB, walk *boltcheck.Report, err error) {
	path := filepath.Join(dir, DBFile)
	flag := os.O_RDONLY
	if !readOnly {
		flag = os.O_RDWR | os.O_CREATE
	}
	f, err := os.OpenFile(path, flag, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("crawler: open %s: %w", path, err)
	}
	handed := false // bbolt owns f once Open is called
	defer func() {
		if !handed {
			f.Close()
		}
	}()
	if err := lockDir(f, dir, !readOnly, timeout); err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("crawler: %w", err)
	}
	if st.Size() > 0 {
		walk, err = boltcheck.Walk(f, st.Size())
		if err != nil {
			return nil, nil, fmt.Errorf("crawler: check %s: %w", path, err)
		}
		if !walk.OK() {
			return nil, walk, damaged(dir, path, walk.Err())
		}
	} else if readOnly {
		return nil, nil, damaged(dir, path, errors.New("the file is empty (0 bytes)"))
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			err = panicDamage(dir, p)
		}
		if err != nil && db != nil {
			err = errors.Join(err, db.Close())
			db = nil
		}
	}()
	handed = true // bbolt.Open closes f on failure, db.Close after
	db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: timeout, ReadOnly: readOnly,
		OpenFile: func(string, int, os.FileMode) (*os.File, error) { return f, nil }})
	if err != nil {
		return nil, walk, fmt.Errorf("crawler: open %s: %w", path, err)
	}
	if err := checkTx(db); err != nil {
		return db, walk, damaged(dir, path, err) // the deferred func closes db
	}
	return db, walk, nil
}

// lockDir takes the lock of data directory dir's crawl.db, open as f:
// exclusive for a writer, shared for a reader. When another process holds
// it past timeout, the error wraps ErrLocked and says what to do.
func lockDir(f *os.File, dir string, exclusive bool, timeout time.Duration) error {
	err := lockFile(f, exclusive, timeout)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errLockTimeout) && exclusive:
		return fmt.Errorf("%w: %s (wait for it to finish or stop it)", ErrLocked, dir)
	case errors.Is(err, errLockTimeout):
		return fmt.Errorf("%w: %s (run this again when the crawl has stopped)", ErrLocked, dir)
	}
	return fmt.Errorf("crawler: lock %s: %w", f.Name(), err)
}

// checkTx runs bbolt's Tx.Check and returns its first errors joined.
func checkTx(db *bolt.DB) error {
	var errs []string
	n := 0
	err := db.View(func(tx *bolt.Tx) error {
		for e := range tx.Check() {
			if n++; n <= 3 {
				errs = append(errs, e.Error())
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	if n > 3 {
		errs = append(errs, fmt.Sprintf("and %d more", n-3))
	}
	return fmt.Errorf("bbolt's consistency check: %s", strings.Join(errs, "; "))
}

// panicDamage is the DamageError for a panic or memory fault p met while
// reading dir's crawl.db (bbolt asserting on a page, a decoder slicing out
// of range): the boundary between a damaged file and a crash. Every
// recover of a read of a data directory goes through it.
func panicDamage(dir string, p any) error {
	return damaged(dir, filepath.Join(dir, DBFile), fmt.Errorf("reading it failed: %v", p))
}

// guard runs fn, turning a panic or memory fault inside it into a
// DamageError naming the file (panicDamage).
func guard(dir string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			err = panicDamage(dir, p)
		}
	}()
	return fn()
}

// OpenWritable opens the bbolt file of data directory dir for writing, and
// only if it checks clean: under the exclusive lock it takes once and
// keeps, openDB checks the file's structure, then checkContent checks what
// the data means (pages, index, drops, frontier) on the opened database
// through read-only views, so nothing writes to a damaged file and no other
// process can change it between the check and the first write. The drop
// log is not checked here: the crawl reconciles it (reconcileDropLog) and
// fails with ErrDropLogMismatch when it disagrees with the store. It fails
// with ErrLocked while another process holds dir, and with a DamageError
// naming what is wrong. Cost: one read of the file by the walk, Tx.Check
// from the page cache, and one index look-up per stored page.
func OpenWritable(dir string, timeout time.Duration) (db *bolt.DB, err error) {
	db, walk, err := openDB(dir, false, timeout)
	if err != nil || walk == nil { // walk is nil for a new file: nothing to check
		return db, err
	}
	rep := &CheckReport{Dir: dir}
	err = guard(dir, func() error { return checkContent(context.Background(), db, dir, "", false, rep) })
	if err == nil {
		err = rep.Err()
	}
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return db, nil
}

// ErrDiskFull is wrapped by Run's error when a write failed for want of
// space (ENOSPC) or past the process's file size limit (EFBIG).
var ErrDiskFull = errors.New("crawler: no space to write")

// diskFull explains err when a write failed for want of space: bbolt
// commits atomically (the failed transaction left nothing) and the drop
// log is restored from the store on the next open, so nothing decided is
// lost and the same command resumes once there is room.
func diskFull(err error, dir string) error {
	// bbolt formats some errors with %s ("file resize error: ..."), so
	// the text is looked at too.
	msg := err.Error()
	if !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EFBIG) &&
		!strings.Contains(msg, syscall.ENOSPC.Error()) && !strings.Contains(msg, syscall.EFBIG.Error()) {
		return err
	}
	return fmt.Errorf("%w: the disk holding %s is full (or a file size limit was reached); the crawl stopped, and everything recorded before is intact: free some space and run the same command to resume: %w",
		ErrDiskFull, dir, err)
}
