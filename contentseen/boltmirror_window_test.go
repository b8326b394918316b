package contentseen

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
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

// TestBoltMirrorReopenAfterInterruptedMerge interrupts a merge after its
// step into table 0 (the later tables lack what table 0 took) and reopens
// the index holding its tables in memory: it must open, answer as an
// oracle, and still answer so once a merge has moved the delta again.
func TestBoltMirrorReopenAfterInterruptedMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 74))
	path := filepath.Join(t.TempDir(), "x.db")
	o := BoltOptions{NoSync: true, MemoryLimit: 1 << 30}
	x := mustOpenBolt(t, path, o)
	x.minDelta = 1 << 30
	var fps []Fingerprint
	record := func(n int) {
		for range n {
			fps = append(fps, Fingerprint(rng.Uint64()))
			add(t, x, uint64(len(fps)), fps[len(fps)-1])
		}
	}
	record(1000)
	if err := x.Checkpoint(context.Background()); err != nil {
		t.Fatal(err)
	}
	record(200)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	x.afterMergeStep = func(table int) {
		if table == 0 {
			cancel()
		}
	}
	if err := x.Checkpoint(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Checkpoint cancelled after table 0's step = %v, want %v", err, context.Canceled)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}

	x = mustOpenBolt(t, path, o)
	x.minDelta = 1 << 30
	if !x.HoldsTablesInMemory() {
		t.Fatal("reopened after an interrupted merge, the index does not hold its tables in memory")
	}
	// Queries near the entries the interrupted merge moved, some of them
	// found by a later table only.
	var queries []Fingerprint
	for _, fp := range fps[1000:1040] {
		queries = append(queries, plant(rng, fp, rng.IntN(testMaxK(x.layout)+1)))
	}
	checkNear(t, x, x.layout, oracleOf(fps), queries)
	if err := x.Checkpoint(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !x.HoldsTablesInMemory() {
		t.Fatal("the index let go of its tables in memory")
	}
	checkNear(t, x, x.layout, oracleOf(fps), queries)
}
