package storage_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/storage"
)

// A crawler completes each page in one write transaction: a page is stored,
// or dropped as a duplicate of a stored page and logged.
func Example() {
	dir, err := os.MkdirTemp("", "storage-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := bolt.Open(filepath.Join(dir, "crawl.db"), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	store, err := storage.New(db, storage.DefaultOptions())
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	at := time.Date(2026, 11, 22, 14, 0, 0, 0, time.UTC)
	text := "Salmon return to the river every autumn."
	var digest [16]byte
	copy(digest[:], "digest of text") // the caller computes a real digest

	// First fetch: new text, so store it.
	page := &storage.Page{
		URL: "https://example.com/salmon", Status: 200, FetchedAt: at,
		Title: "Salmon", Text: text, Fingerprint: 0xdeadbeefcafef00d, Digest: digest,
		Body: []byte("<html>...</html>"),
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := store.PutTx(tx, page)
		return err
	}); err != nil {
		log.Fatal(err)
	}

	// Second fetch: same digest, so drop it, log it, then record it.
	dlog, err := storage.OpenDropLog(filepath.Join(dir, "dropped.jsonl"))
	if err != nil {
		log.Fatal(err)
	}
	defer dlog.Close()
	if err := db.Update(func(tx *bolt.Tx) error {
		target, ok := store.ByDigestTx(tx, digest)
		if !ok {
			return fmt.Errorf("expected a stored page with this digest")
		}
		d := &storage.Drop{
			URL: "https://mirror.example/salmon", Title: "Salmon", Depth: 1, FetchedAt: at,
			DuplicateOf: target, Reason: storage.ReasonExact, Text: text,
			Fingerprint: 0xdeadbeefcafef00d, MatchedFingerprint: 0xdeadbeefcafef00d,
		}
		if err := dlog.Write(storage.NewDropRecord(d, page.URL)); err != nil {
			return err
		}
		return store.PutDropTx(tx, d)
	}); err != nil {
		log.Fatal(err)
	}

	pages, drops, err := store.Counts(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("pages:", pages, "drops:", drops)
	d, err := store.DropByURL(ctx, "https://mirror.example/salmon")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("drop %d duplicates page %d (%s): %q\n", d.ID, d.DuplicateOf, d.Reason, d.Text)
	line, err := os.ReadFile(dlog.Path())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(line))
	if _, err := store.ExportJSONL(ctx, os.Stdout); err != nil {
		log.Fatal(err)
	}
	// Output:
	// pages: 1 drops: 1
	// drop 1 duplicates page 1 (exact): "Salmon return to the river every autumn."
	// {"time":"2026-11-22T14:00:00.000Z","url":"https://mirror.example/salmon","final_url":"","duplicate_of":"https://example.com/salmon","duplicate_of_id":1,"distance":0,"reason":"exact","fingerprint":"deadbeefcafef00d","matched_fingerprint":"deadbeefcafef00d","title":"Salmon","depth":1}
	// {"id":1,"url":"https://example.com/salmon","final_url":"","status":200,"content_type":"","lang":"","title":"Salmon","text":"Salmon return to the river every autumn.","fingerprint":"deadbeefcafef00d","thin":false,"truncated":false,"fetched_at":"2026-11-22T14:00:00.000Z","depth":0}
}
