package contentseen

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestBoltMirrorQueryAcrossMirrorAdd queries in a read transaction that
// begins after a merge trimmed its entries from the delta bucket but
// before it added them to the tables' mirror, and lets the merge end
// (mirror added to, frozen part let go) between the query's two reads:
// the tables' and the delta's. The merged fingerprint must be found by one
// of them, as it would be from the transaction's blocks.
func TestBoltMirrorQueryAcrossMirrorAdd(t *testing.T) {
	for _, mem := range []int64{0, 1 << 30} { // the tables read from the blocks, then held in memory
		t.Run(fmt.Sprintf("memory=%d", mem), func(t *testing.T) { testQueryAcrossMirrorAdd(t, mem) })
	}
}

func testQueryAcrossMirrorAdd(t *testing.T, memoryLimit int64) {
	rng := rand.New(rand.NewPCG(testSeed(t), 73))
	ctx := context.Background()
	x := openIndexWith(t, &bolt.Options{NoSync: true}, BoltOptions{MemoryLimit: memoryLimit})
	x.minDelta = 1 << 30 // merges only by Checkpoint
	for i := range 1000 {
		add(t, x, uint64(i+1), Fingerprint(rng.Uint64()))
	}
	if err := x.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	e := Fingerprint(rng.Uint64())
	add(t, x, 5000, e)

	// Holding the mirror's lock (taken whether or not the tables are held) stops the merge in addToMirror, after its
	// last transaction trimmed the delta bucket.
	x.mem.mu.Lock()
	held := true
	defer func() {
		if held {
			x.mem.mu.Unlock()
		}
	}()
	merged := make(chan error, 1)
	go func() { merged <- x.Checkpoint(ctx) }()
	waitDeltaEmpty(t, x)

	x.betweenReads = func() {
		x.betweenReads = nil
		held = false
		x.mem.mu.Unlock()
		if err := <-merged; err != nil {
			t.Error(err)
		}
	}
	ms, err := x.Near(ctx, e, 0)
	if err != nil {
		t.Fatal(err)
	}
	if x.betweenReads != nil {
		t.Fatal("the query did not pause between its reads")
	}
	if !hasFingerprint(ms, e) {
		t.Errorf("Near(%v, 0) in a transaction begun before the merge's mirror add = %v, want the merged fingerprint", e, ms)
	}
}

// waitDeltaEmpty returns once a read transaction sees x's delta bucket
// empty: a running merge has committed its last trim.
func waitDeltaEmpty(t *testing.T, x *BoltIndex) {
	t.Helper()
	for {
		empty := false
		err := x.db.View(func(tx *bolt.Tx) error {
			top, err := x.top(tx)
			if err != nil {
				return err
			}
			k, _ := top.Bucket(deltaBucket).Cursor().First()
			empty = k == nil
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if empty {
			return
		}
		runtime.Gosched()
	}
}
