package contentseen

import (
	"context"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// TestBoltNearAtScaleMatchesOracle checks the bbolt index at the size the
// budgets are quoted at, which the other oracle tests only imitate (a
// narrow range of fingerprints for a dense run): 10M random fingerprints
// bulk-loaded into the default layout, then some added one by one (the
// delta), then merged into the blocks (Checkpoint), and after each step
// queries at 0..12 bits from stored fingerprints and random ones, at the
// layout's k and the wide radii the judge uses (7 and 11), compared with a
// brute-force scan of every stored fingerprint. Then the same again with
// the index reopened holding its tables in memory (BoltOptions.MemoryLimit:
// decoded from the blocks at 10M, added to by a merge). It takes minutes
// and a GB or two,
// so it runs only with SIMCRAWL_BIG=1 (SIMCRAWL_SCALE_N sets the size):
//
//	SIMCRAWL_BIG=1 go test -run TestBoltNearAtScaleMatchesOracle -timeout 0 ./contentseen/
func TestBoltNearAtScaleMatchesOracle(t *testing.T) {
	if os.Getenv("SIMCRAWL_BIG") != "1" {
		t.Skip("10M fingerprints: run with SIMCRAWL_BIG=1")
	}
	n := 10_000_000
	if s := os.Getenv("SIMCRAWL_SCALE_N"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1000 {
			t.Fatalf("SIMCRAWL_SCALE_N=%q: want a count of at least 1000", s)
		}
		n = v
	}
	l, err := LayoutByName(Layout4x16)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(uint64(n), 17))
	ids := make([]uint64, n)
	fps := make([]Fingerprint, n)
	for i := range n {
		ids[i], fps[i] = uint64(i+1), Fingerprint(rng.Uint64())
	}
	path := filepath.Join(t.TempDir(), "index.db")
	x, err := OpenBolt(path, BoltOptions{Layout: l, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := x.Close(); err != nil {
			t.Error(err)
		}
	}()
	if err := x.AddBatch(ctx, ids, fps); err != nil {
		t.Fatal(err)
	}
	check := func(step string) {
		t.Helper()
		queries := make([]Fingerprint, 0, 400)
		for j := range 360 {
			queries = append(queries, plant(rng, fps[rng.IntN(len(fps))], j%13))
		}
		for range 40 {
			queries = append(queries, Fingerprint(rng.Uint64()))
		}
		for _, k := range []int{l.K(), 7, 11} {
			want := bruteNear(fps, ids, queries, k)
			found := 0
			for qi, q := range queries {
				ms, err := x.Near(ctx, q, k)
				if err != nil {
					t.Fatalf("%s: near %016x k=%d: %v", step, uint64(q), k, err)
				}
				got := make([]uint64, 0, len(ms))
				for _, m := range ms {
					got = append(got, m.ID)
				}
				slices.Sort(got)
				if !slices.Equal(got, want[qi]) {
					t.Errorf("%s: near %016x k=%d: ids %v, want %v", step, uint64(q), k, got, want[qi])
				}
				found += len(got)
			}
			t.Logf("%s: k=%d: %d queries, %d matches", step, k, len(queries), found)
		}
	}
	addSome := func() {
		// One by one into the delta: half of them near stored
		// fingerprints, so that a query finds matches in the blocks (or
		// the tables in memory) and the delta at once.
		for i := range 2000 {
			fp := Fingerprint(rng.Uint64())
			if i%2 == 0 {
				fp = plant(rng, fps[rng.IntN(len(fps))], 1+rng.IntN(7)) // not 0: one id per fingerprint
			}
			id := uint64(len(ids) + 1)
			if err := x.Add(ctx, id, fp); err != nil {
				t.Fatal(err)
			}
			ids, fps = append(ids, id), append(fps, fp)
		}
	}
	check("bulk-loaded")
	addSome()
	check("with a delta")
	if err := x.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	check("merged")
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if x, err = OpenBolt(path, BoltOptions{Layout: l, NoSync: true, MemoryLimit: 8 << 30}); err != nil {
		t.Fatal(err)
	}
	if !x.HoldsTablesInMemory() {
		t.Fatal("reopened with a MemoryLimit, the index does not hold its tables in memory")
	}
	check("tables in memory")
	addSome()
	check("tables in memory, with a delta")
	if err := x.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	check("tables in memory, merged")
}

// bruteNear returns, for each query, the sorted ids of the fingerprints
// within k bits: one pass over the stored set for all queries.
func bruteNear(fps []Fingerprint, ids []uint64, queries []Fingerprint, k int) [][]uint64 {
	out := make([][]uint64, len(queries))
	for i, fp := range fps {
		for qi, q := range queries {
			if bits.OnesCount64(uint64(fp^q)) <= k {
				out[qi] = append(out[qi], ids[i])
			}
		}
	}
	for _, o := range out {
		slices.Sort(o)
	}
	return out
}
