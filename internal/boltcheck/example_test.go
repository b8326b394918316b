package boltcheck_test

import (
	"fmt"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/internal/boltcheck"
)

// Check a bbolt file before opening it, then cut it in half and check again.
func Example() {
	dir, _ := os.MkdirTemp("", "boltcheck")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "x.db")
	db, _ := bolt.Open(path, 0o600, nil)
	_ = db.Update(func(tx *bolt.Tx) error {
		b, _ := tx.CreateBucket([]byte("b"))
		return b.Put([]byte("k"), make([]byte, 10000))
	})
	_ = db.Close()

	f, _ := os.Open(path)
	st, _ := f.Stat()
	rep, _ := boltcheck.Walk(f, st.Size())
	fmt.Println("sound:", rep.OK(), rep.Err())
	rep, _ = boltcheck.Walk(f, st.Size()/2)
	fmt.Println("half:", rep.OK())
	f.Close()
	// Output:
	// sound: true <nil>
	// half: false
}
