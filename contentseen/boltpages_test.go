package contentseen

import (
	"context"
	"math/rand/v2"
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
	db, err := bolt.Open(filepath.Join(t.TempDir(), "x.db"), 0o600, &bolt.Options{PageSize: 2048, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	x, err := NewBoltIndex(db, BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
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
	err = db.Update(func(tx *bolt.Tx) error {
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
