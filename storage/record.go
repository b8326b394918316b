package storage

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// formatVersion is the on-disk format. It is written once into the top
// bucket ("format") and as the first byte of every metadata record, so a
// later version can read old records or refuse them with ErrFormat.
const formatVersion = 1

// ErrFormat reports a record or store written in a format this version of
// the package does not read.
var ErrFormat = errors.New("storage: unsupported format version")

// itob is the key of an ID: 8 bytes big-endian, so byte order is numeric
// order and new IDs append at the right edge of the B-tree.
func itob(id uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], id)
	return k[:]
}

func btoi(k []byte) uint64 { return binary.BigEndian.Uint64(k) }

// pageRecord is the metadata of a page as stored in the "meta" bucket:
// formatVersion, then this JSON. Text and body live in their own buckets so
// that listing pages never reads them.
type pageRecord struct {
	URL         string    `json:"url"`
	FinalURL    string    `json:"final_url,omitempty"`
	Status      int       `json:"status"`
	ContentType string    `json:"content_type,omitempty"`
	FetchedAt   time.Time `json:"fetched_at"`
	Depth       int       `json:"depth"`
	Title       string    `json:"title,omitempty"`
	Lang        string    `json:"lang,omitempty"`
	Fingerprint uint64    `json:"fp"`
	Thin        bool      `json:"thin,omitempty"`
	Digest      string    `json:"digest"` // 32 hex digits
	Truncated   bool      `json:"truncated,omitempty"`
	TextLen     int       `json:"text_len"` // bytes of text before compression
	BodyLen     int       `json:"body_len"` // bytes of body before compression
}

// dropRecord is the metadata of a drop in the "drops" bucket, encoded like
// pageRecord; the text lives in "droptext".
type dropRecord struct {
	URL                string    `json:"url"`
	FinalURL           string    `json:"final_url,omitempty"`
	Title              string    `json:"title,omitempty"`
	Depth              int       `json:"depth"`
	FetchedAt          time.Time `json:"fetched_at"`
	DuplicateOf        uint64    `json:"dup_of"`
	DuplicateOfURL     string    `json:"dup_of_url,omitempty"` // a page of another data directory
	Distance           int       `json:"distance"`
	Reason             string    `json:"reason"`
	Fingerprint        uint64    `json:"fp"`
	MatchedFingerprint uint64    `json:"matched_fp"`
	TextLen            int       `json:"text_len"`
	Similarity         float64   `json:"sim,omitempty"`
	Containment        float64   `json:"cont,omitempty"`
	// A page stored by another worker (Drop.DuplicateOfWorker).
	DuplicateOfWorker string `json:"dup_of_worker,omitempty"`
}

// encodeRecord returns formatVersion followed by the JSON of v.
func encodeRecord(v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("storage: encode record: %w", err)
	}
	out := make([]byte, 0, len(j)+1)
	out = append(out, formatVersion)
	return append(out, j...), nil
}

// decodeRecord parses a value written by encodeRecord. json.Unmarshal
// copies strings, so v never aliases bolt's memory.
func decodeRecord(b []byte, v any) error {
	if len(b) == 0 {
		return fmt.Errorf("storage: empty record: %w", ErrFormat)
	}
	if b[0] != formatVersion {
		return fmt.Errorf("storage: record version %d: %w", b[0], ErrFormat)
	}
	if err := json.Unmarshal(b[1:], v); err != nil {
		return fmt.Errorf("storage: decode record: %w", err)
	}
	return nil
}

func pageToRecord(p *Page) pageRecord {
	return pageRecord{
		URL:         p.URL,
		FinalURL:    p.FinalURL,
		Status:      p.Status,
		ContentType: p.ContentType,
		FetchedAt:   p.FetchedAt,
		Depth:       p.Depth,
		Title:       p.Title,
		Lang:        p.Lang,
		Fingerprint: p.Fingerprint,
		Thin:        p.Thin,
		Digest:      hex.EncodeToString(p.Digest[:]),
		Truncated:   p.Truncated,
		TextLen:     len(p.Text),
		BodyLen:     len(p.Body),
	}
}

func recordToPage(id uint64, r *pageRecord) (*Page, error) {
	p := &Page{
		ID:          id,
		URL:         r.URL,
		FinalURL:    r.FinalURL,
		Status:      r.Status,
		ContentType: r.ContentType,
		FetchedAt:   r.FetchedAt,
		Depth:       r.Depth,
		Title:       r.Title,
		Lang:        r.Lang,
		Fingerprint: r.Fingerprint,
		Thin:        r.Thin,
		Truncated:   r.Truncated,
		TextLen:     r.TextLen,
		BodyLen:     r.BodyLen,
	}
	d, err := hex.DecodeString(r.Digest)
	if err != nil || len(d) != len(p.Digest) {
		return nil, fmt.Errorf("storage: page %d: bad digest %q", id, r.Digest)
	}
	copy(p.Digest[:], d)
	return p, nil
}
