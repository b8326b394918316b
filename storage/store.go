package storage

import (
	"context"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

var (
	// ErrNotFound is returned when no page or drop matches the ID or URL.
	ErrNotFound = errors.New("storage: not found")
	// ErrExists is returned by PutTx when a new page (ID 0) has a requested
	// URL that is already stored. The frontier fetches each URL once, so
	// this means a bug upstream; replacing a page is done by passing its ID.
	ErrExists = errors.New("storage: url already stored")
)

// Names of the buckets nested inside Options.Bucket and of its keys.
var (
	bMeta     = []byte("meta")     // page ID -> formatVersion + JSON pageRecord
	bText     = []byte("text")     // page ID -> zstd(text)
	bBody     = []byte("body")     // page ID -> zstd(body)
	bHeader   = []byte("header")   // page ID -> zstd(JSON of the response header)
	bURL      = []byte("url")      // requested URL -> page ID
	bFinal    = []byte("final")    // final URL -> page ID (first page wins)
	bDigest   = []byte("digest")   // 16-byte text digest -> page ID (first page wins)
	bDrops    = []byte("drops")    // drop ID -> formatVersion + JSON dropRecord
	bDropText = []byte("droptext") // drop ID -> zstd(text)
	bDropURL  = []byte("dropurl")  // requested and final URL -> drop ID (last drop wins)
	bDropBy   = []byte("dropby")   // stored page ID ‖ drop ID -> empty
	bSketch   = []byte("sketch")   // page ID -> the caller's sketch of the text (Page.Sketch)
	subs      = [][]byte{bMeta, bText, bBody, bHeader, bURL, bFinal, bDigest, bDrops, bDropText, bDropURL, bDropBy, bSketch}

	kFormat = []byte("format") // formatVersion as one byte
	kPages  = []byte("npages") // number of stored pages, 8 bytes big-endian
)

// appendFill is the FillPercent of buckets whose keys only grow: their
// pages split full instead of half full, which halves their size. Not 1.0
// so that the rare in-place replacement does not split at once.
const appendFill = 0.9

// Options configures a Store; a plain value, read once by New. The zero
// value is not the default (it drops texts of dropped pages): start from
// DefaultOptions.
type Options struct {
	// Bucket is the top-level bucket holding everything of this store, so
	// it can share one bbolt file with the index and the frontier.
	// Empty means "pages".
	Bucket string
	// KeepDropText keeps the extracted text of each dropped page,
	// zstd-compressed, so `crawl dups show` can diff it against the stored
	// page. It costs roughly the compressed text size per drop (a few KB).
	// Drops recorded while it is false have Drop.Text == "".
	KeepDropText bool
	// ReadOnly reads db as if it were opened read-only: no bucket is
	// created, a missing one reads as an empty store, and the caller must
	// not write through the Store. For checking a writable database before
	// anything writes to it.
	ReadOnly bool
}

// DefaultOptions returns the options a crawl uses unless told otherwise.
func DefaultOptions() Options {
	return Options{Bucket: "pages", KeepDropText: true}
}

// Store is the page store and drop record inside a bbolt DB the caller
// owns. It holds no mutable state of its own: it is safe for concurrent use,
// and its Tx methods are as safe as the transaction passed to them (bbolt
// transactions must not be shared between goroutines). Closing the DB is
// the caller's job; Store has no Close.
type Store struct {
	db           *bolt.DB
	bucket       []byte
	keepDropText bool
}

// New returns a Store on db, creating its buckets if db is writable. On a
// read-only DB (bolt.Options.ReadOnly, e.g. `crawl stats` beside no crawl)
// a missing bucket reads as an empty store.
func New(db *bolt.DB, o Options) (*Store, error) {
	if c := codec(); c.err != nil {
		return nil, c.err
	}
	if o.Bucket == "" {
		o.Bucket = "pages"
	}
	s := &Store{db: db, bucket: []byte(o.Bucket), keepDropText: o.KeepDropText}
	if db.IsReadOnly() || o.ReadOnly {
		err := db.View(func(tx *bolt.Tx) error { return s.checkFormat(tx.Bucket(s.bucket)) })
		return s, err
	}
	err := db.Update(func(tx *bolt.Tx) error {
		top, err := tx.CreateBucketIfNotExists(s.bucket)
		if err != nil {
			return fmt.Errorf("storage: create bucket %q: %w", s.bucket, err)
		}
		for _, name := range subs {
			if _, err := top.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("storage: create bucket %q: %w", name, err)
			}
		}
		if top.Get(kFormat) == nil {
			return top.Put(kFormat, []byte{formatVersion})
		}
		return s.checkFormat(top)
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Store) checkFormat(top *bolt.Bucket) error {
	if top == nil {
		return nil
	}
	if v := top.Get(kFormat); v != nil && (len(v) != 1 || v[0] != formatVersion) {
		return fmt.Errorf("storage: bucket %q has format %v, this build reads %d: %w", s.bucket, v, formatVersion, ErrFormat)
	}
	return nil
}

// buckets are the nested buckets of one transaction; all nil when the store
// has no buckets (only possible on a read-only DB).
type buckets struct {
	top, meta, text, body, header, url, final, digest, drops, dropText, dropURL, dropBy *bolt.Bucket
	// sketch is nil in a store written before sketches existed and
	// opened read-only (New creates it on a writable DB).
	sketch *bolt.Bucket
}

func (s *Store) buckets(tx *bolt.Tx) (buckets, error) {
	top := tx.Bucket(s.bucket)
	if top == nil {
		if tx.Writable() {
			return buckets{}, fmt.Errorf("storage: bucket %q missing: was the Store made with New on this DB?", s.bucket)
		}
		return buckets{}, nil
	}
	b := buckets{
		top: top, meta: top.Bucket(bMeta), text: top.Bucket(bText), body: top.Bucket(bBody),
		header: top.Bucket(bHeader),
		url:    top.Bucket(bURL), final: top.Bucket(bFinal), digest: top.Bucket(bDigest),
		drops: top.Bucket(bDrops), dropText: top.Bucket(bDropText),
		dropURL: top.Bucket(bDropURL), dropBy: top.Bucket(bDropBy), sketch: top.Bucket(bSketch),
	}
	for _, x := range []*bolt.Bucket{b.meta, b.text, b.body, b.header, b.url, b.final, b.digest, b.drops, b.dropText, b.dropURL, b.dropBy} {
		if x == nil {
			return buckets{}, fmt.Errorf("storage: bucket %q incomplete", s.bucket)
		}
	}
	if tx.Writable() {
		// FillPercent belongs to the bucket handle of this transaction.
		for _, x := range []*bolt.Bucket{b.meta, b.text, b.body, b.header, b.drops, b.dropText} {
			x.FillPercent = appendFill
		}
	}
	return b, nil
}

// view runs fn in a read transaction after checking ctx; b.top is nil when
// the store is empty and has no buckets.
func (s *Store) view(ctx context.Context, fn func(tx *bolt.Tx, b buckets) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.db.View(func(tx *bolt.Tx) error {
		b, err := s.buckets(tx)
		if err != nil {
			return err
		}
		return fn(tx, b)
	})
}

// Counts returns the number of stored pages and of recorded drops, in O(1).
func (s *Store) Counts(ctx context.Context) (pages, drops int, err error) {
	err = s.view(ctx, func(_ *bolt.Tx, b buckets) error {
		if b.top == nil {
			return nil
		}
		if v := b.top.Get(kPages); len(v) == 8 {
			pages = int(btoi(v))
		}
		drops = int(b.drops.Sequence()) // drops are never deleted
		return nil
	})
	return pages, drops, err
}
