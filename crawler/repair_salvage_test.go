package crawler

import (
	"bytes"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestPutSalvagedLeavesOutWhatBboltCannotHold: a damaged page can give
// Salvage a record with an empty bucket name or key, one too large, or a
// name that is a bucket elsewhere. Repair leaves such a record out and
// goes on (it had failed with "bucket name required"); a record bbolt
// holds is written, and any other error stops it.
func TestPutSalvagedLeavesOutWhatBboltCannotHold(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "x.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b := func(s ...string) [][]byte {
		var p [][]byte
		for _, x := range s {
			p = append(p, []byte(x))
		}
		return p
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, c := range []struct {
			name    string
			path    [][]byte
			k, v    []byte
			written bool
		}{
			{"a record", b("pages"), []byte("k"), []byte("v"), true},
			{"a nested bucket's record", b("pages", "sub"), []byte("k"), []byte("v"), true},
			{"an empty bucket name", b(""), []byte("k"), []byte("v"), false},
			{"an empty nested bucket name", b("pages", ""), []byte("k"), []byte("v"), false},
			{"an empty key", b("pages"), []byte{}, []byte("v"), false},
			{"a key too large", b("pages"), bytes.Repeat([]byte("k"), bolt.MaxKeySize+1), []byte("v"), false},
			{"a value where a bucket is", b("pages"), []byte("sub"), []byte("v"), false},
			{"a bucket where a value is", b("pages", "k"), []byte("k2"), []byte("v"), false},
		} {
			ok, err := putSalvaged(tx, c.path, c.k, c.v, 0)
			if err != nil || ok != c.written {
				t.Errorf("%s: putSalvaged = %v, %v; want %v, nil", c.name, ok, err, c.written)
			}
		}
		if got := tx.Bucket([]byte("pages")).Get([]byte("k")); string(got) != "v" {
			t.Errorf("pages/k = %q after the records, want %q", got, "v")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Outside a writable transaction it is an error, not damage.
	err = db.View(func(tx *bolt.Tx) error {
		if ok, err := putSalvaged(tx, b("pages"), []byte("k3"), []byte("v"), 0); ok || err == nil {
			t.Errorf("putSalvaged in a read transaction = %v, %v; want an error", ok, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
