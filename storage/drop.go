package storage

import (
	"bytes"
	"context"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Reasons a page is dropped, as stored in Drop.Reason and the drop log.
const (
	ReasonExact = "exact" // same text digest as a stored page
	ReasonNear  = "near"  // SimHash within k bits of a stored page
)

// Drop is a dropped (duplicate) page, kept for `crawl dups` and
// `crawl dups show`. Like Page, a returned Drop owns its memory and is a
// plain value (concurrent reads only).
type Drop struct {
	ID                   uint64 // assigned by PutDropTx: drop order, never reused
	URL, FinalURL, Title string
	Depth                int
	FetchedAt            time.Time
	DuplicateOf          uint64 // ID of the stored page it duplicates
	// DuplicateOfURL is the URL of the stored page it duplicates when that
	// page is stored in another data directory: a worker of a distributed
	// crawl dropping a copy of a page another worker stored. DuplicateOf
	// then names no page of this store. Empty when the page is this
	// store's (every drop of a crawl on one machine).
	DuplicateOfURL string
	// DuplicateOfWorker names the worker whose data directory holds that
	// page (DuplicateOf is its ID there), when the crawl's drop knows it.
	// Such a drop is not listed by DropsOf: no page of this store has it.
	DuplicateOfWorker  string
	Distance           int
	Reason             string // ReasonExact or ReasonNear
	Fingerprint        uint64
	MatchedFingerprint uint64
	// Similarity and Containment are the verified resemblance of the two
	// texts (the caller's estimates, 0..1; 1 for exact copies). 0 for
	// drops recorded before they existed.
	Similarity, Containment float64
	// Text is the extracted text, kept zstd-compressed when
	// Options.KeepDropText; empty otherwise and in DropHeaders.
	Text    string
	TextLen int // bytes of Text before compression (0 when not kept); filled on read
}

// PutDropTx records d in tx, assigning d.ID. It indexes the drop by
// requested and final URL (a URL dropped twice finds its latest drop) and
// under the stored page it duplicates (DropsOf). Cost: a small record, one
// zstd frame of the text when kept, three or four small index writes.
func (s *Store) PutDropTx(tx *bolt.Tx, d *Drop) error {
	if err := checkDrop(d); err != nil {
		return fmt.Errorf("storage: put drop: %w", err)
	}
	b, err := s.buckets(tx)
	if err != nil {
		return err
	}
	id, err := b.drops.NextSequence()
	if err != nil {
		return fmt.Errorf("storage: next drop id: %w", err)
	}
	r := dropRecord{
		URL: d.URL, FinalURL: d.FinalURL, Title: d.Title, Depth: d.Depth,
		FetchedAt: d.FetchedAt, DuplicateOf: d.DuplicateOf, DuplicateOfURL: d.DuplicateOfURL,
		DuplicateOfWorker: d.DuplicateOfWorker, Distance: d.Distance, Reason: d.Reason, Fingerprint: d.Fingerprint,
		MatchedFingerprint: d.MatchedFingerprint, Similarity: d.Similarity, Containment: d.Containment,
	}
	key := itob(id)
	if s.keepDropText && d.Text != "" {
		r.TextLen = len(d.Text)
		if err := b.dropText.Put(key, compress([]byte(d.Text))); err != nil {
			return fmt.Errorf("storage: put text of drop %d: %w", id, err)
		}
	}
	rec, err := encodeRecord(r)
	if err != nil {
		return err
	}
	if err := b.drops.Put(key, rec); err != nil {
		return fmt.Errorf("storage: put drop %d: %w", id, err)
	}
	for _, u := range []string{d.URL, d.FinalURL} {
		if u == "" {
			continue
		}
		if err := b.dropURL.Put([]byte(u), key); err != nil {
			return fmt.Errorf("storage: index url of drop %d: %w", id, err)
		}
	}
	if d.DuplicateOfWorker == "" {
		if err := b.dropBy.Put(append(itob(d.DuplicateOf), key...), nil); err != nil {
			return fmt.Errorf("storage: index target of drop %d: %w", id, err)
		}
	}
	d.ID = id
	return nil
}

// checkDrop returns what makes d unfit to record: a drop has a URL and
// one of the two reasons. A record read back is checked too, so a damaged
// one that still decodes is an error, not a drop with no reason.
func checkDrop(d *Drop) error {
	if d.URL == "" {
		return fmt.Errorf("empty url")
	}
	if d.Reason != ReasonExact && d.Reason != ReasonNear {
		return fmt.Errorf("%s: reason %q is neither %q nor %q", d.URL, d.Reason, ReasonExact, ReasonNear)
	}
	return nil
}

func decodeDrop(b buckets, key, v []byte, withText bool) (*Drop, error) {
	id := btoi(key)
	var r dropRecord
	if err := decodeRecord(v, &r); err != nil {
		return nil, fmt.Errorf("storage: drop %d: %w", id, err)
	}
	d := &Drop{
		ID: id, URL: r.URL, FinalURL: r.FinalURL, Title: r.Title, Depth: r.Depth,
		FetchedAt: r.FetchedAt, DuplicateOf: r.DuplicateOf, DuplicateOfURL: r.DuplicateOfURL, Distance: r.Distance,
		Reason: r.Reason, Fingerprint: r.Fingerprint, MatchedFingerprint: r.MatchedFingerprint,
		TextLen: r.TextLen, Similarity: r.Similarity, Containment: r.Containment,
		DuplicateOfWorker: r.DuplicateOfWorker,
	}
	if err := checkDrop(d); err != nil {
		return nil, fmt.Errorf("storage: drop %d: damaged record: %w", id, err)
	}
	if withText {
		t, err := getCompressed(b.dropText, key)
		if err != nil {
			return nil, fmt.Errorf("storage: text of drop %d: %w", id, err)
		}
		d.Text = string(t)
	}
	return d, nil
}

func (s *Store) loadDrop(b buckets, id uint64) (*Drop, error) {
	if b.top == nil {
		return nil, fmt.Errorf("storage: drop %d: %w", id, ErrNotFound)
	}
	key := itob(id)
	v := b.drops.Get(key)
	if v == nil {
		return nil, fmt.Errorf("storage: drop %d: %w", id, ErrNotFound)
	}
	return decodeDrop(b, key, v, true)
}

// Drops calls fn for every drop in drop order, with its text. It streams
// like Pages (bounded memory, no transaction open while fn runs).
func (s *Store) Drops(ctx context.Context, fn func(*Drop) error) error {
	return scan(ctx, s, func(b buckets) *bolt.Bucket { return b.drops },
		func(b buckets, k, v []byte) (*Drop, int, error) {
			d, err := decodeDrop(b, k, v, true)
			if err != nil {
				return nil, 0, err
			}
			return d, len(d.Text), nil
		}, fn)
}

// DropHeaders is Drops without the text: for `crawl dups` and `crawl
// stats`, it decompresses nothing.
func (s *Store) DropHeaders(ctx context.Context, fn func(*Drop) error) error {
	return scan(ctx, s, func(b buckets) *bolt.Bucket { return b.drops },
		func(b buckets, k, v []byte) (*Drop, int, error) {
			d, err := decodeDrop(b, k, v, false)
			return d, 0, err
		}, fn)
}

// GetDrop returns drop id with its text, or an error wrapping ErrNotFound.
func (s *Store) GetDrop(ctx context.Context, id uint64) (*Drop, error) {
	var d *Drop
	err := s.view(ctx, func(_ *bolt.Tx, b buckets) error {
		var err error
		d, err = s.loadDrop(b, id)
		return err
	})
	return d, err
}

// GetDropHeader returns drop id without its text (as DropHeaders does),
// or an error wrapping ErrNotFound.
func (s *Store) GetDropHeader(ctx context.Context, id uint64) (*Drop, error) {
	var d *Drop
	err := s.view(ctx, func(_ *bolt.Tx, b buckets) error {
		key := itob(id)
		var v []byte
		if b.top != nil {
			v = b.drops.Get(key)
		}
		if v == nil {
			return fmt.Errorf("storage: drop %d: %w", id, ErrNotFound)
		}
		var err error
		d, err = decodeDrop(b, key, v, false)
		return err
	})
	return d, err
}

// DropByURL returns the latest drop whose requested or final URL is url,
// with its text, or an error wrapping ErrNotFound.
func (s *Store) DropByURL(ctx context.Context, url string) (*Drop, error) {
	var d *Drop
	err := s.view(ctx, func(_ *bolt.Tx, b buckets) error {
		if b.top == nil {
			return fmt.Errorf("storage: drop %s: %w", url, ErrNotFound)
		}
		v := b.dropURL.Get([]byte(url))
		if len(v) != 8 {
			return fmt.Errorf("storage: drop %s: %w", url, ErrNotFound)
		}
		var err error
		d, err = s.loadDrop(b, btoi(v))
		return err
	})
	return d, err
}

// DropURLTx reports whether a drop is recorded under url (its requested
// or final URL), and the latest one's id, inside the caller's transaction
// (read or write).
func (s *Store) DropURLTx(tx *bolt.Tx, url string) (id uint64, ok bool) {
	b, err := s.buckets(tx)
	if err != nil || b.top == nil {
		return 0, false
	}
	v := b.dropURL.Get([]byte(url))
	if len(v) != 8 {
		return 0, false
	}
	return btoi(v), true
}

// DropsOf calls fn, in drop order and without text, for every drop that
// duplicates stored page pageID. It reads an index, not all drops: one
// group of `crawl dups` costs its own size.
func (s *Store) DropsOf(ctx context.Context, pageID uint64, fn func(*Drop) error) error {
	prefix := itob(pageID)
	next := itob(0)
	for {
		var chunk []*Drop
		err := s.view(ctx, func(_ *bolt.Tx, b buckets) error {
			if b.top == nil {
				return nil
			}
			c := b.dropBy.Cursor()
			k, _ := c.Seek(append(prefix, next...))
			for ; k != nil && bytes.HasPrefix(k, prefix) && len(chunk) < scanChunkRecords; k, _ = c.Next() {
				key := k[8:]
				v := b.drops.Get(key)
				if v == nil {
					return fmt.Errorf("storage: drop index names missing drop %d", btoi(key))
				}
				d, err := decodeDrop(b, key, v, false)
				if err != nil {
					return err
				}
				chunk = append(chunk, d)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, d := range chunk {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(d); err != nil {
				return err
			}
		}
		if len(chunk) < scanChunkRecords {
			return nil
		}
		next = itob(chunk[len(chunk)-1].ID + 1)
	}
}

// DropGroups calls fn with each stored page that has drops and how many,
// in page ID order, reading only the small drop index (16 bytes a drop):
// `crawl dups` sorts these to show the largest groups first, then reads
// each with DropsOf. It holds one (page ID, count) pair per group in memory.
func (s *Store) DropGroups(ctx context.Context, fn func(pageID uint64, drops int) error) error {
	type group struct {
		id uint64
		n  int
	}
	var groups []group
	err := s.view(ctx, func(_ *bolt.Tx, b buckets) error {
		if b.top == nil {
			return nil
		}
		c := b.dropBy.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			id := btoi(k[:8])
			if n := len(groups); n > 0 && groups[n-1].id == id {
				groups[n-1].n++
			} else {
				groups = append(groups, group{id, 1})
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, g := range groups {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(g.id, g.n); err != nil {
			return err
		}
	}
	return nil
}
