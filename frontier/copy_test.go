package frontier

import (
	"context"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestCopyTxLeavesOutURLsWithoutAHost: damaged bytes can turn a seen key
// or a queued, retried or in-flight item's URL into a string that is no
// http(s) URL. Crawl repair's copy counts such records as lost and goes
// on (it had failed with "bucket name required", queueing one under an
// empty host), and keeps the rest.
func TestCopyTxLeavesOutURLsWithoutAHost(t *testing.T) {
	f, db, _ := newFrontier(t, Options{})
	good := []Item{{URL: u("a.example", "1")}, {URL: u("b.example", "2")}}
	mustAdd(t, f, good...)
	err := db.Update(func(tx *bolt.Tx) error {
		top := tx.Bucket([]byte("frontier"))
		// A queued item whose URL lost its scheme, under a host bucket.
		q, err := top.Bucket(bQueue).CreateBucketIfNotExists([]byte("a.example"))
		if err != nil {
			return err
		}
		if err := q.Put(qkey{0, 900}.bytes(), encodeItem(Item{URL: "ttp://a.example/3"})); err != nil {
			return err
		}
		// A seen key that is no URL, marked done as if stored.
		if err := top.Bucket(bSeen).Put([]byte("\x00garbage"), []byte{stDone, 's'}); err != nil {
			return err
		}
		// A retried item with no host.
		k := make([]byte, 16)
		k[15] = 1
		return top.Bucket(bRetry).Put(k, encodeItem(Item{URL: "http://"}))
	})
	if err != nil {
		t.Fatal(err)
	}
	dst, err := bolt.Open(filepath.Join(t.TempDir(), "copy.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	var st CopyStats
	err = db.View(func(src *bolt.Tx) error {
		return dst.Update(func(tx *bolt.Tx) error {
			st, err = CopyTx(src, tx, "", func(string, string) bool { return true })
			return err
		})
	})
	if err != nil {
		t.Fatalf("CopyTx: %v", err)
	}
	if st.Lost != 3 || st.Pending != len(good) {
		t.Errorf("CopyTx = %+v, want 3 lost and the %d good URLs pending", st, len(good))
	}
	c, err := New(dst, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for range good {
		it, err := c.Next(context.Background())
		if err != nil {
			t.Fatalf("Next on the copy: %v", err)
		}
		got[it.URL] = true
	}
	for _, it := range good {
		if !got[it.URL] {
			t.Errorf("the copy did not hand out %s (got %v)", it.URL, got)
		}
	}
}
