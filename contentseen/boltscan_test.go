package contentseen

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// ScanTx returns every recorded (id, fingerprint) once, in id order, both
// after Seen and after AddBatch, and stops at fn's error.
func TestBoltScanTx(t *testing.T) {
	ctx := context.Background()
	x, err := OpenBolt(filepath.Join(t.TempDir(), "index.db"), BoltOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	r := rand.New(rand.NewPCG(3, 4))
	want := map[uint64]Fingerprint{}
	var ids []uint64
	var fps []Fingerprint
	for i := range 3000 {
		id, fp := uint64(r.Int64N(1<<40)), Fingerprint(r.Uint64())
		if i < 1000 {
			if _, dup, err := x.Seen(ctx, id, fp); err != nil || dup {
				t.Fatalf("Seen: dup %v, err %v", dup, err)
			}
		} else {
			ids, fps = append(ids, id), append(fps, fp)
		}
		want[id] = fp
	}
	if err := x.AddBatch(ctx, ids, fps); err != nil {
		t.Fatal(err)
	}
	got := map[uint64]Fingerprint{}
	var last uint64
	err = x.db.View(func(tx *bolt.Tx) error {
		return x.ScanTx(tx, func(id uint64, fp Fingerprint) error {
			if len(got) > 0 && id <= last {
				t.Errorf("id %d after %d: not in id order", id, last)
			}
			last = id
			got[id] = fp
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("ScanTx gave %d ids, want %d", len(got), len(want))
	}
	for id, fp := range want {
		if got[id] != fp {
			t.Errorf("ScanTx: id %d -> %v, want %v", id, got[id], fp)
		}
	}

	stop := errors.New("stop")
	n := 0
	err = x.db.View(func(tx *bolt.Tx) error {
		return x.ScanTx(tx, func(uint64, Fingerprint) error {
			n++
			if n == 10 {
				return stop
			}
			return nil
		})
	})
	if !errors.Is(err, stop) || n != 10 {
		t.Errorf("ScanTx with fn failing at the 10th: %d calls, err %v; want 10 calls and fn's error", n, err)
	}
}
