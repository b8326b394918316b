package contentseen

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unsafe"

	bolt "go.etcd.io/bbolt"
)

func TestReplacedPagesRuns(t *testing.T) {
	mapping := make([]byte, 16*4096)
	base := uintptr(unsafe.Pointer(&mapping[0]))
	r := &replacedPages{base: base, end: base + uintptr(len(mapping)), pageSize: 4096}
	r.note(mapping[5*4096+100 : 5*4096+200]) // page 5
	r.note(mapping[3*4096 : 3*4096+10])      // page 3
	r.note(mapping[4*4096+4000 : 6*4096+1])  // pages 4..6
	r.note(mapping[10*4096 : 10*4096+4096])  // page 10 exactly
	r.note(mapping[5*4096 : 5*4096+1])       // page 5 again
	r.note(make([]byte, 100))                // outside the mapping
	r.note(nil)
	want := [][2]uint64{{3, 4}, {10, 1}}
	if got := r.runs(); !slices.Equal(got, want) {
		t.Errorf("runs = %v, want %v", got, want)
	}
	var none *replacedPages
	none.note(mapping[:1]) // a nil recorder records nothing, without panicking
}

// TestMergeUnalignedPageSize merges into a database whose page size is
// not a multiple of the OS page size (a file created on a machine with 4
// KiB pages and opened on one with 16 or 64 KiB pages; here a 2 KiB-page
// file): dropping the replaced pages must round to whole OS pages, and
// cannot fail the merge (it only drops caches).
func TestMergeUnalignedPageSize(t *testing.T) {
	x := openIndexIn(t, &bolt.Options{PageSize: 2048, NoSync: true})
	x.minDelta = 1 << 30
	r := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	var ids []uint64
	var fps []Fingerprint
	for i := range 20000 {
		ids, fps = append(ids, uint64(i+1)), append(fps, Fingerprint(r.Uint64()))
	}
	if err := x.AddBatch(ctx, ids, fps); err != nil {
		t.Fatal(err)
	}
	err := x.db.Update(func(tx *bolt.Tx) error {
		for i := range 2000 {
			if err := x.AddTx(tx, uint64(100000+i), Fingerprint(r.Uint64())); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Checkpoint(ctx); err != nil {
		t.Fatalf("Checkpoint on a 2 KiB-page database: %v", err)
	}
}

// TestDropRecentLosesNothing records fingerprints (with fsync, so that
// their pages are clean), drops the pages of the delta's records and their
// id records from memory, and checks that on Linux those pages left the
// page cache, and that every record is still found.
func TestDropRecentLosesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	x := mustOpenBolt(t, path, BoltOptions{})
	defer x.Close()
	x.minDelta = 1 << 30
	r := rand.New(rand.NewPCG(testSeed(t), 3))
	fps := make([]Fingerprint, 3000)
	for i := range fps {
		fps[i] = Fingerprint(r.Uint64())
	}
	for part := range 3 {
		err := x.db.Update(func(tx *bolt.Tx) error {
			for i := part * 1000; i < (part+1)*1000; i++ {
				if err := x.AddTx(tx, uint64(i+1), fps[i]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var pages []uint64
	err := x.db.View(func(tx *bolt.Tx) error {
		var rp replacedPages
		rp.begin(x.db, tx)
		top, err := x.top(tx)
		if err != nil {
			return err
		}
		for _, b := range [][]byte{deltaBucket, fpsBucket} {
			c := top.Bucket(b).Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				rp.note(v)
			}
		}
		for _, run := range rp.runs() {
			for id := run[0]; id < run[0]+run[1]; id++ {
				pages = append(pages, id)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	x.mergeMu.Lock()
	err = x.dropRecent(^uint64(0))
	seq := x.droppedSeq
	x.mergeMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if seq != 3000 {
		t.Errorf("droppedSeq = %d after dropping 3,000 records, want 3000", seq)
	}
	if cached, err := cachedPages(path); err != nil {
		t.Logf("page cache not checked: %v", err)
	} else {
		ps := uint64(x.db.Info().PageSize / os.Getpagesize())
		still := 0
		for _, id := range pages {
			if i := id * ps; i < uint64(len(cached)) && cached[i] {
				still++
			}
		}
		// The kernel keeps a page that shares a large folio with a mapped
		// one (here pages 2 and 3 stayed, beside the meta pages 0 and 1,
		// which every transaction reads).
		if still > len(pages)/10 {
			t.Errorf("%d of the records' %d pages are still in the page cache", still, len(pages))
		}
	}
	ctx := context.Background()
	for i, fp := range fps {
		ms, err := x.Near(ctx, fp, 0)
		if err != nil || len(ms) != 1 || ms[0].ID != uint64(i+1) {
			t.Fatalf("Near(%v) after the drop = %v, %v; want id %d", fp, ms, err, i+1)
		}
	}
	err = x.db.View(func(tx *bolt.Tx) error {
		for i, want := range fps {
			if got, ok, err := x.FingerprintTx(tx, uint64(i+1)); err != nil || !ok || got != want {
				return fmt.Errorf("FingerprintTx(%d) = %v, %v, %v; want %v", i+1, got, ok, err, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}

// TestReleaseMappedDropsPages reads a whole index (mapping its pages in),
// then checks that ReleaseMapped leaves none of the file mapped and that
// the index reads the same after it.
func TestReleaseMappedDropsPages(t *testing.T) {
	x := mustOpenBolt(t, filepath.Join(t.TempDir(), "x.db"), BoltOptions{NoSync: true})
	defer x.Close()
	o := addRandom(t, x, rand.New(rand.NewPCG(testSeed(t), 4)), 20_000)
	mapped := func() int {
		t.Helper()
		var n int
		err := x.db.View(func(tx *bolt.Tx) error {
			var err error
			n, err = mappedPages(x.db.Info().Data, int(tx.Size()))
			return err
		})
		if err != nil {
			t.Skipf("mapped pages not counted: %v", err)
		}
		return n
	}
	checkBlocks(t, x, o) // reads every block
	before := mapped()
	if before < 100 {
		t.Fatalf("%d pages mapped after reading every block: the count does not work", before)
	}
	if err := ReleaseMapped(x.db); err != nil {
		t.Fatal(err)
	}
	// The View that counts reads a meta page, and its fault maps the
	// cached pages around it: 16 at most (the kernel's fault-around).
	if after := mapped(); after > 16 {
		t.Errorf("%d of %d pages still mapped after ReleaseMapped", after, before)
	}
	checkBlocks(t, x, o)
}

// openIndexIn opens a new bbolt file with o in a temporary directory and a
// default BoltIndex in it, both closed (index first) when the test ends.
func openIndexIn(t *testing.T, o *bolt.Options) *BoltIndex {
	t.Helper()
	return openIndexWith(t, o, BoltOptions{})
}

// openIndexWith is openIndexIn with a BoltIndex opened with bo.
func openIndexWith(t *testing.T, o *bolt.Options, bo BoltOptions) *BoltIndex {
	t.Helper()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "x.db"), 0o600, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	x, err := NewBoltIndex(db, bo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := x.Close(); err != nil {
			t.Error(err)
		}
	})
	return x
}
