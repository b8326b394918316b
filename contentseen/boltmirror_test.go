package contentseen

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
)

// TestBoltMirrorThroughMerges adds fingerprints one by one into an index
// that holds its tables in memory and merges its delta every few dozen
// records, while readers query fingerprints whose Add had returned before
// they asked: every one must be found, at every point of a merge (the
// blocks written, the mirror added to, the delta's frozen part let go).
func TestBoltMirrorThroughMerges(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 71))
	ctx := context.Background()
	x := mustOpenBolt(t, filepath.Join(t.TempDir(), "x.db"), BoltOptions{NoSync: true, MemoryLimit: 1 << 30})
	x.minDelta = 25
	const n = 500
	fps := make([]Fingerprint, n)
	for i := range fps {
		fps[i] = Fingerprint(rng.Uint64())
	}
	// After each Add, the readers query three fingerprints recorded
	// before it, while the next Adds and merges run.
	recorded := make(chan int, n)
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rr := rand.New(rand.NewPCG(uint64(r), 1))
			for have := range recorded {
				for range 3 {
					i := rr.IntN(have)
					ms, err := x.Near(ctx, plant(rr, fps[i], 1), 1)
					if err != nil {
						t.Error(err)
						return
					}
					if !hasFingerprint(ms, fps[i]) {
						t.Errorf("Near missed fingerprint %d of %d recorded (%d merges so far)", i, have, x.merges.Load())
						return
					}
				}
			}
		}()
	}
	for i, fp := range fps {
		add(t, x, uint64(i+1), fp)
		recorded <- i + 1
	}
	if err := x.Checkpoint(ctx); err != nil {
		t.Error(err)
	}
	close(recorded)
	wg.Wait()
	if x.merges.Load() < 10 {
		t.Errorf("%d merges ran, want many", x.merges.Load())
	}
	if !x.HoldsTablesInMemory() {
		t.Fatal("the index let go of its tables in memory")
	}
	// Everything is in the blocks and the mirror now: the mirror alone
	// answers as a MemIndex of the same fingerprints would.
	if got, want := x.mirror().Len(), n; got != want {
		t.Errorf("the mirror holds %d fingerprints, want %d", got, want)
	}
	checkNear(t, x, x.layout, oracleOf(fps), fps[:50])
}

// TestBoltMirrorLimit checks MemoryLimit: an index past it reads its
// blocks (at open, after AddBatch, and once a merge would pass it), and
// answers the same.
func TestBoltMirrorLimit(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 72))
	ctx := context.Background()
	l := DefaultLayout()
	path := filepath.Join(t.TempDir(), "x.db")
	limit := mirrorBytes(l, 300)
	x := mustOpenBolt(t, path, BoltOptions{NoSync: true, MemoryLimit: limit})
	x.minDelta = 50
	if !x.HoldsTablesInMemory() {
		t.Fatal("an empty index under its limit does not hold its tables in memory")
	}
	var fps []Fingerprint
	batch := func(n int) {
		var ids []uint64
		var b []Fingerprint
		for range n {
			fps = append(fps, Fingerprint(rng.Uint64()))
			ids, b = append(ids, uint64(len(fps))), append(b, fps[len(fps)-1])
		}
		if err := x.AddBatch(ctx, ids, b); err != nil {
			t.Fatal(err)
		}
	}
	batch(250)
	if !x.HoldsTablesInMemory() {
		t.Fatal("250 fingerprints under a limit of 300: not held in memory after AddBatch")
	}
	for range 80 { // a merge of 50 passes 300
		fps = append(fps, Fingerprint(rng.Uint64()))
		add(t, x, uint64(len(fps)), fps[len(fps)-1])
	}
	if err := x.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if x.HoldsTablesInMemory() {
		t.Fatalf("%d fingerprints under a limit of 300: still held in memory after merges", len(fps))
	}
	checkNear(t, x, l, oracleOf(fps), fps[:40])
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	x = mustOpenBolt(t, path, BoltOptions{NoSync: true, MemoryLimit: limit})
	if x.HoldsTablesInMemory() {
		t.Fatal("reopened past its limit, the index holds its tables in memory")
	}
	checkNear(t, x, l, oracleOf(fps), fps[:40])
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	x = mustOpenBolt(t, path, BoltOptions{NoSync: true, MemoryLimit: mirrorBytes(l, len(fps))})
	if !x.HoldsTablesInMemory() {
		t.Fatal("reopened with room, the index does not hold its tables in memory")
	}
	checkNear(t, x, l, oracleOf(fps), fps[:40])
}

// oracleOf returns an oracle of fps under ids 1, 2, ...
func oracleOf(fps []Fingerprint) oracle {
	o := oracle{}
	for i, fp := range fps {
		o.add(uint64(i+1), fp)
	}
	return o
}

// TestBoltMirrorAddLetsQueriesIn checks that a merge adding to the tables
// in memory builds each table's new arrays without holding their write
// lock, and that a query made then finds the fingerprints being added
// (the delta's frozen part still holds them).
func TestBoltMirrorAddLetsQueriesIn(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 73))
	ctx := context.Background()
	x := mustOpenBolt(t, filepath.Join(t.TempDir(), "x.db"), BoltOptions{NoSync: true, MemoryLimit: 1 << 30})
	x.minDelta = 1 << 30 // merges only by Checkpoint
	var fps []Fingerprint
	for i := range 300 {
		fps = append(fps, Fingerprint(rng.Uint64()))
		add(t, x, uint64(i+1), fps[i])
	}
	m := x.mirror()
	if m == nil {
		t.Fatal("the index does not hold its tables in memory")
	}
	var tables []int
	m.aside = func(table int) {
		tables = append(tables, table)
		if !m.mu.TryRLock() {
			t.Errorf("table %d: the tables' write lock is held while the new arrays are built", table)
			return
		}
		m.mu.RUnlock()
		q := fps[len(fps)/2+table]
		ms, err := x.Near(ctx, q, 0)
		if err != nil || !hasFingerprint(ms, q) {
			t.Errorf("table %d built: Near(%v, 0) = %v, %v during the add", table, q, ms, err)
		}
	}
	if err := x.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	m.aside = nil
	if len(tables) != x.layout.Tables() {
		t.Fatalf("the add built tables %v, want all %d", tables, x.layout.Tables())
	}
	if m.Len() != len(fps) {
		t.Errorf("the tables in memory hold %d fingerprints, want %d", m.Len(), len(fps))
	}
	checkNear(t, x, x.layout, oracleOf(fps), fps[:30])
}
