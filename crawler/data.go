package crawler

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

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
}

// OpenData opens dir read-only. It fails with ErrLocked while a crawl runs
// on dir, and with a clear error when dir holds no crawl.
func OpenData(dir string, timeout time.Duration) (*Data, error) {
	if timeout <= 0 {
		timeout = time.Second
	}
	path := filepath.Join(dir, DBFile)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("crawler: no crawl data in %s: %w", dir, err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: timeout, ReadOnly: true})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("%w: %s (run this again when the crawl has stopped)", ErrLocked, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("crawler: open %s: %w", path, err)
	}
	st, err := storage.New(db, storage.Options{})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("crawler: open store: %w", err), db.Close())
	}
	return &Data{DB: db, Store: st, Dir: dir}, nil
}

// Close closes the database.
func (d *Data) Close() error { return d.DB.Close() }
