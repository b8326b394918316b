package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Page is one stored page. A Page returned by this package owns all its
// memory: nothing aliases bolt's mmap, so it stays valid after the
// transaction and may be modified. A Page is a plain value: goroutines may
// read one at once, but not modify it while others use it.
type Page struct {
	ID            uint64 // assigned by PutTx when 0 (bucket sequence); stable, never reused
	URL, FinalURL string // requested (canonical) and final URL after redirects
	Status        int
	ContentType   string
	FetchedAt     time.Time
	Depth         int
	Title, Text   string
	Lang          string
	Fingerprint   uint64 // 0 with Thin=true when the text was too short to fingerprint
	// Thin marks "not enough content": the page is stored but never
	// indexed by digest, so it is never an exact-duplicate target.
	Thin bool
	// Digest of the extracted text, computed by the caller: the
	// exact-duplicate key. The zero digest is not indexed.
	Digest    [16]byte
	Body      []byte // raw body; stored zstd-compressed; nil when not loaded
	Truncated bool   // the body was cut at the crawler's size limit
	// Header holds the response headers, kept for a WARC export; stored
	// and loaded with the body (nil when the body is not loaded).
	Header http.Header
	// Sketch is the caller's compact summary of the text (the crawler
	// stores a contentseen.Sketch), opaque to the store: written by PutTx
	// when not empty, read back only by SketchTx. Pages stored before
	// sketches existed have none.
	Sketch []byte

	// Filled on read (ignored by PutTx): sizes before compression, known
	// even when Text or Body is not loaded.
	TextLen, BodyLen int
}

// PutTx stores p in tx and returns its ID, also setting p.ID. With p.ID == 0
// it assigns the next ID of the bucket sequence; an ID is never handed out
// twice, even when tx is rolled back (bbolt rolls the sequence back too, and
// the ID was then never visible). With p.ID != 0 it replaces that page (or
// stores it under that ID), dropping the old index entries.
//
// Indexes: requested URL (must be new unless replacing: ErrExists), final
// URL and digest (first page wins; thin pages and the zero digest are not
// indexed by digest). Cost: one metadata record, two zstd frames and three
// or four small index writes, all in tx: nothing is visible until tx commits
// and nothing remains if it rolls back.
func (s *Store) PutTx(tx *bolt.Tx, p *Page) (uint64, error) {
	if p.URL == "" {
		return 0, fmt.Errorf("storage: put page: empty url")
	}
	b, err := s.buckets(tx)
	if err != nil {
		return 0, err
	}
	id := p.ID
	fresh := true // not a replacement: count it
	if prev := b.url.Get([]byte(p.URL)); prev != nil && (id == 0 || btoi(prev) != id) {
		return 0, fmt.Errorf("storage: put %s (stored as page %d): %w", p.URL, btoi(prev), ErrExists)
	}
	if id == 0 {
		if id, err = b.meta.NextSequence(); err != nil {
			return 0, fmt.Errorf("storage: next page id: %w", err)
		}
	} else if old := b.meta.Get(itob(id)); old != nil {
		fresh = false
		if err := s.unindexPage(b, id, old); err != nil {
			return 0, err
		}
	} else if id > b.meta.Sequence() {
		if err := b.meta.SetSequence(id); err != nil {
			return 0, fmt.Errorf("storage: page sequence: %w", err)
		}
	}

	rec, err := encodeRecord(pageToRecord(p))
	if err != nil {
		return 0, err
	}
	key := itob(id)
	if err := b.meta.Put(key, rec); err != nil {
		return 0, fmt.Errorf("storage: put page %d: %w", id, err)
	}
	if err := putCompressed(b.text, key, []byte(p.Text)); err != nil {
		return 0, fmt.Errorf("storage: put text of page %d: %w", id, err)
	}
	if err := putCompressed(b.body, key, p.Body); err != nil {
		return 0, fmt.Errorf("storage: put body of page %d: %w", id, err)
	}
	var hdr []byte
	if len(p.Header) > 0 {
		if hdr, err = json.Marshal(p.Header); err != nil {
			return 0, fmt.Errorf("storage: encode header of page %d: %w", id, err)
		}
	}
	if err := putCompressed(b.header, key, hdr); err != nil {
		return 0, fmt.Errorf("storage: put header of page %d: %w", id, err)
	}
	if len(p.Sketch) > 0 {
		if err := b.sketch.Put(key, p.Sketch); err != nil {
			return 0, fmt.Errorf("storage: put sketch of page %d: %w", id, err)
		}
	} else if err := b.sketch.Delete(key); err != nil {
		return 0, fmt.Errorf("storage: delete sketch of page %d: %w", id, err)
	}
	if err := b.url.Put([]byte(p.URL), key); err != nil {
		return 0, fmt.Errorf("storage: index url of page %d: %w", id, err)
	}
	if p.FinalURL != "" && p.FinalURL != p.URL && b.final.Get([]byte(p.FinalURL)) == nil {
		if err := b.final.Put([]byte(p.FinalURL), key); err != nil {
			return 0, fmt.Errorf("storage: index final url of page %d: %w", id, err)
		}
	}
	if !p.Thin && p.Digest != ([16]byte{}) && b.digest.Get(p.Digest[:]) == nil {
		if err := b.digest.Put(p.Digest[:], key); err != nil {
			return 0, fmt.Errorf("storage: index digest of page %d: %w", id, err)
		}
	}
	if fresh {
		var n uint64
		if v := b.top.Get(kPages); len(v) == 8 {
			n = btoi(v)
		}
		if err := b.top.Put(kPages, itob(n+1)); err != nil {
			return 0, fmt.Errorf("storage: count pages: %w", err)
		}
	}
	p.ID = id
	return id, nil
}

// unindexPage removes the index entries that point at page id, before the
// page is replaced.
func (s *Store) unindexPage(b buckets, id uint64, old []byte) error {
	var r pageRecord
	if err := decodeRecord(old, &r); err != nil {
		return fmt.Errorf("storage: replace page %d: %w", id, err)
	}
	op, err := recordToPage(id, &r)
	if err != nil {
		return err
	}
	del := func(bk *bolt.Bucket, k []byte) error {
		if v := bk.Get(k); v != nil && btoi(v) == id {
			return bk.Delete(k)
		}
		return nil
	}
	for _, e := range []struct {
		bk *bolt.Bucket
		k  []byte
	}{{b.url, []byte(op.URL)}, {b.final, []byte(op.FinalURL)}, {b.digest, op.Digest[:]}} {
		if len(e.k) == 0 {
			continue
		}
		if err := del(e.bk, e.k); err != nil {
			return fmt.Errorf("storage: replace page %d: %w", id, err)
		}
	}
	return nil
}

// putCompressed stores zstd(v) under key, or deletes key when v is empty
// (an absent key reads as empty).
func putCompressed(bk *bolt.Bucket, key, v []byte) error {
	if len(v) == 0 {
		return bk.Delete(key)
	}
	return bk.Put(key, compress(v))
}

func getCompressed(bk *bolt.Bucket, key []byte) ([]byte, error) {
	z := bk.Get(key)
	if z == nil {
		return nil, nil
	}
	return decompress(z)
}

// ByDigestTx returns the ID of the first non-thin page stored with digest d.
func (s *Store) ByDigestTx(tx *bolt.Tx, d [16]byte) (id uint64, ok bool) {
	b, err := s.buckets(tx)
	if err != nil || b.top == nil {
		return 0, false
	}
	if v := b.digest.Get(d[:]); len(v) == 8 {
		return btoi(v), true
	}
	return 0, false
}

// SketchTx returns a copy of the sketch stored with page id, ok false when
// the page has none (stored before sketches, or thin) or does not exist.
func (s *Store) SketchTx(tx *bolt.Tx, id uint64) (sketch []byte, ok bool) {
	b, err := s.buckets(tx)
	if err != nil || b.sketch == nil {
		return nil, false
	}
	v := b.sketch.Get(itob(id))
	if v == nil {
		return nil, false
	}
	return bytes.Clone(v), true
}

// PageHeaderTx returns page id's metadata, without text or body, or an
// error wrapping ErrNotFound.
func (s *Store) PageHeaderTx(tx *bolt.Tx, id uint64) (*Page, error) {
	b, err := s.buckets(tx)
	if err != nil {
		return nil, err
	}
	return s.load(b, id, false, false)
}

// PageTextTx returns page id with its text but not its body (nor
// header), or an error wrapping ErrNotFound. The Page is a copy.
func (s *Store) PageTextTx(tx *bolt.Tx, id uint64) (*Page, error) {
	b, err := s.buckets(tx)
	if err != nil {
		return nil, err
	}
	return s.load(b, id, true, false)
}

// GetTx returns page id with text and body, or an error wrapping
// ErrNotFound. The Page is a copy: it stays valid after tx ends.
func (s *Store) GetTx(tx *bolt.Tx, id uint64) (*Page, error) {
	b, err := s.buckets(tx)
	if err != nil {
		return nil, err
	}
	return s.load(b, id, true, true)
}

// Get is GetTx in its own read transaction.
func (s *Store) Get(ctx context.Context, id uint64) (*Page, error) {
	var p *Page
	err := s.view(ctx, func(_ *bolt.Tx, b buckets) error {
		var err error
		p, err = s.load(b, id, true, true)
		return err
	})
	return p, err
}

// ByURL returns the page whose requested URL is url or, failing that, the
// first page whose final URL is url, with text and body.
func (s *Store) ByURL(ctx context.Context, url string) (*Page, error) {
	var p *Page
	err := s.view(ctx, func(_ *bolt.Tx, b buckets) error {
		if b.top == nil {
			return fmt.Errorf("storage: page %s: %w", url, ErrNotFound)
		}
		v := b.url.Get([]byte(url))
		if v == nil {
			v = b.final.Get([]byte(url))
		}
		if len(v) != 8 {
			return fmt.Errorf("storage: page %s: %w", url, ErrNotFound)
		}
		var err error
		p, err = s.load(b, btoi(v), true, true)
		return err
	})
	return p, err
}

func (s *Store) load(b buckets, id uint64, withText, withBody bool) (*Page, error) {
	if b.top == nil {
		return nil, fmt.Errorf("storage: page %d: %w", id, ErrNotFound)
	}
	key := itob(id)
	v := b.meta.Get(key)
	if v == nil {
		return nil, fmt.Errorf("storage: page %d: %w", id, ErrNotFound)
	}
	return s.decodePage(b, key, v, withText, withBody)
}

func (s *Store) decodePage(b buckets, key, v []byte, withText, withBody bool) (*Page, error) {
	id := btoi(key)
	var r pageRecord
	if err := decodeRecord(v, &r); err != nil {
		return nil, fmt.Errorf("storage: page %d: %w", id, err)
	}
	p, err := recordToPage(id, &r)
	if err != nil {
		return nil, err
	}
	if withText {
		t, err := getCompressed(b.text, key)
		if err != nil {
			return nil, fmt.Errorf("storage: text of page %d: %w", id, err)
		}
		p.Text = string(t)
	}
	if withBody {
		if p.Body, err = getCompressed(b.body, key); err != nil {
			return nil, fmt.Errorf("storage: body of page %d: %w", id, err)
		}
		hdr, err := getCompressed(b.header, key)
		if err != nil {
			return nil, fmt.Errorf("storage: header of page %d: %w", id, err)
		}
		if hdr != nil {
			if err := json.Unmarshal(hdr, &p.Header); err != nil {
				return nil, fmt.Errorf("storage: header of page %d: %w", id, err)
			}
		}
	}
	return p, nil
}

// URLStoredTx reports whether a page is stored under the requested URL url,
// and its id, inside the caller's transaction (read or write).
func (s *Store) URLStoredTx(tx *bolt.Tx, url string) (id uint64, ok bool) {
	b, err := s.buckets(tx)
	if err != nil || b.top == nil {
		return 0, false
	}
	v := b.url.Get([]byte(url))
	if len(v) != 8 {
		return 0, false
	}
	return btoi(v), true
}

// LastIDTx returns the largest page ID given out so far (0 in an empty
// store). A caller that numbers pages itself (PutTx with Page.ID set)
// starts after it.
func (s *Store) LastIDTx(tx *bolt.Tx) (uint64, error) {
	b, err := s.buckets(tx)
	if err != nil {
		return 0, err
	}
	return b.meta.Sequence(), nil
}
