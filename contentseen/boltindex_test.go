package contentseen

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

func TestOpenBoltHeldByAnother(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	mustOpenBolt(t, path, BoltOptions{NoSync: true})
	// bbolt's flock is per open file, so a second open in this process
	// stands in for another process.
	x, err := OpenBolt(path, BoltOptions{Timeout: 100 * time.Millisecond})
	if err == nil {
		x.Close()
		t.Fatal("second OpenBolt succeeded, want error")
	}
	if !errors.Is(err, berrors.ErrTimeout) || !strings.Contains(err.Error(), "another process holds it") {
		t.Errorf("second OpenBolt: err = %v, want berrors.ErrTimeout saying another process holds it", err)
	}
}

func TestOpenBoltMismatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	x := mustOpenBolt(t, path, BoltOptions{Scheme: "words", NoSync: true})
	add(t, x, 1, 42)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	l10, err := LayoutByName(Layout10x28)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []BoltOptions{{Layout: l10, Scheme: "words"}, {Scheme: "chars3"}} {
		y, err := OpenBolt(path, o)
		if err == nil {
			y.Close()
			t.Fatalf("OpenBolt with layout %s scheme %q succeeded, want error", o.Layout.Name(), o.Scheme)
		}
		for _, want := range []string{"4x16", `"words"`} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %s", err, want)
			}
		}
	}
	y := mustOpenBolt(t, path, BoltOptions{Scheme: "words"})
	if n := y.Len(); n != 1 {
		t.Errorf("Len() = %d after reopen, want 1", n)
	}
}

// TestBoltIndexSharedDB keeps an index in a caller's database next to the
// caller's own bucket and uses it inside the caller's transactions.
func TestBoltIndexSharedDB(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "crawl.db"), 0o600, &bolt.Options{Timeout: time.Second, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	x, err := NewBoltIndex(db, BoltOptions{Bucket: "seen"})
	if err != nil {
		t.Fatal(err)
	}
	const fp = Fingerprint(0xfeedface)
	err = db.Update(func(tx *bolt.Tx) error {
		pages, err := tx.CreateBucketIfNotExists([]byte("pages"))
		if err != nil {
			return err
		}
		if _, found, err := x.SeenTx(tx, 7, fp); err != nil || found {
			t.Errorf("SeenTx = %v, %v; want admitted", found, err)
		}
		if m, found, err := x.SeenTx(tx, 8, fp^1); err != nil || !found || m.ID != 7 {
			t.Errorf("SeenTx in same tx = %+v, %v, %v; want match id 7", m, found, err)
		}
		return pages.Put([]byte("7"), []byte("page"))
	})
	if err != nil {
		t.Fatal(err)
	}
	// A rolled back transaction records nothing.
	rollback := errors.New("rollback")
	err = db.Update(func(tx *bolt.Tx) error {
		if _, found, err := x.SeenTx(tx, 9, ^fp); err != nil || found {
			t.Errorf("SeenTx = %v, %v; want admitted", found, err)
		}
		return rollback
	})
	if !errors.Is(err, rollback) {
		t.Fatal(err)
	}
	err = db.View(func(tx *bolt.Tx) error {
		if n := x.LenTx(tx); n != 1 {
			t.Errorf("LenTx = %d, want 1", n)
		}
		if got, ok, err := x.FingerprintTx(tx, 7); err != nil || !ok || got != fp {
			t.Errorf("FingerprintTx(7) = %v, %v, %v; want %v", got, ok, err, fp)
		}
		ms, err := x.NearTx(tx, ^fp, 3)
		if err != nil || len(ms) != 0 {
			t.Errorf("NearTx(^fp) = %v, %v; want none", ms, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	// Close leaves the caller's db open.
	if err := db.View(func(tx *bolt.Tx) error { return nil }); err != nil {
		t.Errorf("db unusable after index Close: %v", err)
	}
}

func TestBoltAddBatchInterrupted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	x := mustOpenBolt(t, path, BoltOptions{NoSync: true})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := x.AddBatch(ctx, []uint64{1, 2}, []Fingerprint{1, 2}); !errors.Is(err, context.Canceled) {
		t.Fatalf("AddBatch with cancelled ctx: err = %v, want context.Canceled", err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if y, err := OpenBolt(path, BoltOptions{}); err == nil || !strings.Contains(err.Error(), "rebuild") {
		if err == nil {
			y.Close()
		}
		t.Errorf("reopen after interrupted AddBatch: err = %v, want one asking for a rebuild", err)
	}
}

// BoltOptions.ReadOnly on OpenBolt's own file writes nothing: not a missing
// file, and not Close's free-list commit, which changed every byte of a
// meta page of a file that was only read.
func TestOpenBoltReadOnlyWritesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "index.db")
	ctx := context.Background()
	x, err := OpenBolt(path, BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(x.Add(ctx, 1, 0x0123456789abcdef), x.Close()); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := OpenBolt(path, BoltOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := r.Near(ctx, 0x0123456789abcdef, 0)
	if err != nil || len(ms) != 1 {
		t.Errorf("Near on the read-only index = %v, %v; want the one fingerprint", ms, err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("OpenBolt with ReadOnly wrote to the file")
	}
	missing := filepath.Join(dir, "missing.db")
	if r, err := OpenBolt(missing, BoltOptions{ReadOnly: true}); err == nil {
		t.Errorf("OpenBolt with ReadOnly of a missing file: no error")
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenBolt with ReadOnly of a missing file created it (stat: %v)", err)
	}
}

// An index opened with BoltOptions.ReadOnly on a writable database (a
// check before anything writes) refuses Seen, Add and AddBatch rather
// than committing them.
func TestReadOnlyViewRefusesWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crawl.db")
	ctx := context.Background()
	x, err := OpenBolt(path, BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(x.Add(ctx, 1, 0x0123456789abcdef), x.Close()); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	}()
	v, err := NewBoltIndex(db, BoltOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := v.Close(); err != nil {
			t.Error(err)
		}
	}()
	if _, _, err := v.Seen(ctx, 2, 0xfedcba9876543210); err == nil {
		t.Error("Seen of a new fingerprint on a read-only view: no error")
	}
	if err := v.Add(ctx, 3, 0x1111111111111111); err == nil {
		t.Error("Add on a read-only view: no error")
	}
	if err := v.AddBatch(ctx, []uint64{4}, []Fingerprint{0x2222222222222222}); err == nil {
		t.Error("AddBatch on a read-only view: no error")
	}
	if n := v.Len(); n != 1 {
		t.Errorf("Len after the refused writes = %d, want 1", n)
	}
}
