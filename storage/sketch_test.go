package storage

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func TestSketchAndPageTextTx(t *testing.T) {
	s, db := newStore(t, DefaultOptions())
	withSketch := put(t, s, db, &Page{URL: "http://a/1", Text: "first text", Digest: digest("1"), Sketch: []byte{1, 2, 3}})
	without := put(t, s, db, &Page{URL: "http://a/2", Text: "second text", Digest: digest("2")})
	err := db.View(func(tx *bolt.Tx) error {
		if got, ok := s.SketchTx(tx, withSketch); !ok || !bytes.Equal(got, []byte{1, 2, 3}) {
			t.Errorf("SketchTx(%d) = %v, %v; want [1 2 3], true", withSketch, got, ok)
		}
		if got, ok := s.SketchTx(tx, without); ok {
			t.Errorf("SketchTx(%d) = %v, true; want none", without, got)
		}
		if got, ok := s.SketchTx(tx, 99); ok {
			t.Errorf("SketchTx(99) = %v, true; want none", got)
		}
		if got, err := s.PageTextTx(tx, without); err != nil || got.Text != "second text" || got.Body != nil || got.URL != "http://a/2" {
			t.Errorf("PageTextTx(%d) = %+v, %v", without, got, err)
		}
		if _, err := s.PageTextTx(tx, 99); !errors.Is(err, ErrNotFound) {
			t.Errorf("PageTextTx(99) = %v, want ErrNotFound", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Replacing the page without a sketch removes the old one.
	put(t, s, db, &Page{ID: withSketch, URL: "http://a/1", Text: "first text", Digest: digest("1")})
	if err := db.View(func(tx *bolt.Tx) error {
		if got, ok := s.SketchTx(tx, withSketch); ok {
			t.Errorf("after replace: SketchTx = %v, true; want none", got)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestStoreWithoutSketchBucket opens, read-only, a store written before
// sketches existed (its sketch bucket removed): pages read as having none.
func TestStoreWithoutSketchBucket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crawl.db")
	db := openDB(t, path, false)
	s, err := New(db, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	id := put(t, s, db, &Page{URL: "http://a/1", Text: "text", Digest: digest("1"), Sketch: []byte{9}})
	if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("pages")).DeleteBucket(bSketch) }); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ro := openDB(t, path, true)
	defer ro.Close()
	s, err = New(ro, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := ro.View(func(tx *bolt.Tx) error {
		if _, ok := s.SketchTx(tx, id); ok {
			t.Error("SketchTx found a sketch in a store without the bucket")
		}
		if _, err := s.GetTx(tx, id); err != nil {
			t.Errorf("GetTx: %v", err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestDropResemblance(t *testing.T) {
	s, db := newStore(t, DefaultOptions())
	orig := put(t, s, db, &Page{URL: "http://a/1", Text: "t", Digest: digest("1")})
	d := &Drop{URL: "http://b/1", DuplicateOf: orig, Distance: 5, Reason: ReasonNear, Similarity: 0.8125, Containment: 0.97}
	if err := db.Update(func(tx *bolt.Tx) error { return s.PutDropTx(tx, d) }); err != nil {
		t.Fatal(err)
	}
	got, err := s.DropByURL(t.Context(), "http://b/1")
	if err != nil || got.Similarity != 0.8125 || got.Containment != 0.97 {
		t.Fatalf("DropByURL = %+v, %v; want similarity 0.8125, containment 0.97", got, err)
	}
	rec := NewDropRecord(got, "http://a/1")
	line, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(line), `"similarity":0.813,"containment":0.97`) {
		t.Errorf("drop log line %s lacks similarity 0.813 and containment 0.97", line)
	}
	var back DropRecord
	if err := json.Unmarshal(line, &back); err != nil || back.Similarity != 0.813 || back.Containment != 0.97 {
		t.Errorf("read back %+v, %v", back, err)
	}
	// An older line without the fields reads as zeros, and a record
	// without them writes no such fields.
	var old DropRecord
	if err := json.Unmarshal([]byte(sampleLine), &old); err != nil || old.Similarity != 0 || old.Containment != 0 {
		t.Errorf("older line: %+v, %v", old, err)
	}
	if m, err := json.Marshal(sampleRecord()); err != nil || strings.Contains(string(m), "similarity") {
		t.Errorf("record without resemblance: %s, %v", m, err)
	}
	if !reflect.DeepEqual(sampleRecord().Similarity, 0.0) {
		t.Error("sample record has a similarity")
	}
}
