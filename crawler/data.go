package crawler

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/storage"
)

// Data is a data directory opened read-only, for the commands that inspect
// or export a crawl (export, dups, stats). bbolt's read-only mode takes a
// shared lock, so it waits for a running crawl (which holds the exclusive
// lock) and fails with ErrLocked after the timeout instead of reading a
// file that is being written.
type Data struct {
	DB    *bolt.DB
	Store *storage.Store
	Dir   string

	faultWas bool // the goroutine's SetPanicOnFault before OpenData
	// borrowed marks a running crawl's own database (Crawler.LiveData):
	// Close leaves it open for the crawl.
	borrowed bool
}

// OpenData opens dir read-only. It fails with ErrLocked while a crawl runs
// on dir, with a clear error when dir holds no crawl, and with a
// DamageError (ErrDamaged) when crawl.db fails the checks of openDB.
func OpenData(dir string, timeout time.Duration) (*Data, error) {
	if timeout <= 0 {
		timeout = time.Second
	}
	path := filepath.Join(dir, DBFile)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("crawler: no crawl data in %s: %w", dir, err)
	}
	db, _, err := openDB(dir, true, timeout)
	if err != nil {
		return nil, err
	}
	var st *storage.Store
	err = guard(dir, func() error {
		var err error
		st, err = storage.New(db, storage.Options{})
		return err
	})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("crawler: open store: %w", err), db.Close())
	}
	// A memory fault while reading the mapping (a file changed under us)
	// becomes a panic that Recover turns into an error.
	return &Data{DB: db, Store: st, Dir: dir, faultWas: debug.SetPanicOnFault(true)}, nil
}

// Recover, deferred by a command that reads d right after OpenData in the
// same goroutine, turns a panic or memory fault while reading (bbolt
// asserting on a page, a decoder slicing out of range) into a DamageError
// in *err naming the file, instead of a crash. Reads go through checked
// files only, so this is the last line of defence.
func (d *Data) Recover(err *error) {
	debug.SetPanicOnFault(d.faultWas)
	if p := recover(); p != nil {
		*err = panicDamage(d.Dir, p)
		return
	}
	d.explainReadError(err)
}

// explainReadError says where to look when *err came from reading d: the
// file passed the structural checks, so a record that does not decode is
// damage inside a value.
func (d *Data) explainReadError(err *error) {
	var nd notDamage
	if e := *err; e != nil && !errors.Is(e, ErrDamaged) && !errors.Is(e, context.Canceled) && !errors.As(e, &nd) && isReadError(e) {
		*err = fmt.Errorf("%w (reading %s; `crawl check --data %s` says what is damaged, `crawl repair --data %s --out NEWDIR` copies what can be read)",
			e, filepath.Join(d.Dir, DBFile), d.Dir, d.Dir)
	}
}

// NotDamage marks err as an answer about what a data directory holds (a
// URL it does not record, a stored page where a drop was asked for), not
// a failure to read it: Data.Recover and DataSet.Recover return it without
// the hint that the directory may be damaged. errors.Is and errors.As see
// through it; NotDamage(nil) is nil.
func NotDamage(err error) error {
	if err == nil {
		return nil
	}
	return notDamage{err}
}

type notDamage struct{ error }

func (e notDamage) Unwrap() error { return e.error }

// isReadError reports whether err came from decoding what the data
// directory holds, not from writing the output.
func isReadError(err error) bool {
	var pe *fs.PathError
	if errors.As(err, &pe) || errors.Is(err, syscall.EPIPE) {
		return false
	}
	return true
}

// Close closes the database; on a Data from Crawler.LiveData it does
// nothing (the crawl owns the database).
func (d *Data) Close() error {
	if d.borrowed {
		return nil
	}
	return d.DB.Close()
}

// crawlBucket holds what the crawler itself records about a data directory.
var (
	crawlBucket = []byte("crawl")
	kKey        = []byte("k")
)

// putK records the near-duplicate threshold of the crawl opening the data
// directory, so that tools reading it later (crawl stats) know the k its
// drops were judged with.
func putK(tx *bolt.Tx, k int) error {
	b, err := tx.CreateBucketIfNotExists(crawlBucket)
	if err != nil {
		return err
	}
	return b.Put(kKey, []byte(strconv.Itoa(k)))
}

// K returns the k of the last crawl or dedup run on the data directory;
// ok is false when none recorded one.
func (d *Data) K() (k int, ok bool, err error) {
	err = d.DB.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(crawlBucket)
		if b == nil || b.Get(kKey) == nil {
			return nil
		}
		var perr error
		k, perr = strconv.Atoi(string(b.Get(kKey)))
		ok = perr == nil
		return perr
	})
	if err != nil {
		return 0, false, fmt.Errorf("crawler: read k: %w", err)
	}
	return k, ok, nil
}

// Skipped calls fn for every URL the crawl fetched (or was refused) but
// neither stored nor dropped, with the reason: robots, non-html, noindex,
// url-stored, redirect-to:URL (another URL the crawl fetches on its own),
// redirect-out-of-scope; and for every record `crawl dedup` read and
// skipped (a binary file is non-html), under its key (its URL, or its file
// for HTML trees). In key order: the crawl's and dedup's lists are merged.
func (d *Data) Skipped(fn func(url, reason string) error) error {
	return d.DB.View(func(tx *bolt.Tx) error {
		var dedup *bolt.Cursor
		var dk, dv []byte
		if b := tx.Bucket(dedupBucket); b != nil {
			dedup = b.Cursor()
			dk, dv = dedup.First()
		}
		// emitDedup sends dedup's skipped records with keys before limit
		// (all of them for nil).
		emitDedup := func(limit []byte) error {
			for ; dk != nil && (limit == nil || string(dk) < string(limit)); dk, dv = dedup.Next() {
				if reason, ok := strings.CutPrefix(string(dv), "skipped:"); ok {
					if err := fn(string(dk), reason); err != nil {
						return err
					}
				}
			}
			return nil
		}
		err := frontier.ReadDone(tx, "", func(url, outcome string) error {
			if err := emitDedup([]byte(url)); err != nil {
				return err
			}
			if reason, ok := strings.CutPrefix(outcome, "skipped:"); ok {
				return fn(url, reason)
			}
			return nil
		})
		if err != nil {
			return err
		}
		return emitDedup(nil)
	})
}

// FailedItems calls fn for every URL the crawl recorded as failed, in URL
// order, with its depth, attempts and last error (Item.LastError, the
// reason `crawl failed` prints).
func (d *Data) FailedItems(fn func(frontier.Item) error) error {
	return d.DB.View(func(tx *bolt.Tx) error { return frontier.ReadFailedItems(tx, "", fn) })
}

// Failed calls fn for every URL the crawl recorded as failed, with the
// reason, in URL order: FailedItems without the items.
func (d *Data) Failed(fn func(url, reason string) error) error {
	return d.FailedItems(func(it frontier.Item) error { return fn(it.URL, it.LastError) })
}

// Queued returns how many URLs each host (frontier.HostKey) still has
// queued, waiting for a retry or in flight.
func (d *Data) Queued() (map[string]int, error) {
	var q map[string]int
	err := d.DB.View(func(tx *bolt.Tx) error {
		var err error
		q, err = frontier.ReadQueued(tx, "")
		return err
	})
	return q, err
}
