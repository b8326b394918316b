package contentseen

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// TestNearLargeTablesMatchOracle checks Near against the linear oracle on
// tables large enough for the paths small tests never take: in memory, a
// prefix directory of many bits (the whole 16-bit prefix at the big size,
// where a range is a directory bucket with no search) and matches found
// outside table 0, whose ids come through table 0's directory; in bbolt,
// page-sized blocks holding many prefixes and several restart points,
// where a multi-probe query's ranges continue decoding in the block the
// last one ended in, or step the cursor to a block a few ahead instead of
// seeking. Stored: random fingerprints and, around 300 bases, neighbours
// planted at every distance up to 9 (some with all their flips in one
// block); queried at k = 3 (one prefix per table), 7 (17 per table) and
// 8 (137), half in one AddBatch and the rest one by one (bbolt's delta).
// 15,000 fingerprints (an 11-bit directory; the test covers the same
// blocks of the package's code as at 30,000), 600,000 with SIMCRAWL_BIG=1.
func TestNearLargeTablesMatchOracle(t *testing.T) {
	n := testSize(15_000, 600_000)
	seed := testSeed(t)
	ctx := context.Background()
	l := DefaultLayout()
	rng := rand.New(rand.NewPCG(seed, 17))
	var ids []uint64
	var fps, queries []Fingerprint
	o := oracle{}
	put := func(fp Fingerprint) {
		if _, ok := o[fp]; ok {
			return
		}
		ids, fps = append(ids, uint64(len(ids)+1)), append(fps, fp)
		o.add(uint64(len(ids)), fp)
	}
	for range 300 {
		base := Fingerprint(rng.Uint64())
		queries = append(queries, plant(rng, base, rng.IntN(3)))
		for d := range 10 {
			put(plant(rng, base, d))
		}
		// Flips packed in one 16-bit block: a 4x16 table whose lead block
		// holds them all differs in its prefix, another table does not.
		w := 2 + rng.IntN(6)
		put(base ^ Fingerprint(uint64(1)<<uint(w)-1)<<uint(16*rng.IntN(4)+rng.IntN(16-w)))
	}
	for len(fps) < n {
		put(Fingerprint(rng.Uint64()))
	}
	for range 100 {
		queries = append(queries, Fingerprint(rng.Uint64()))
	}
	half := len(fps) * 9 / 10
	// The brute-force answers, once for every implementation: one scan at
	// the widest k, cut down for the smaller ones (the scan is most of the
	// test's time under -race).
	ks := []int{3, 7, 8}
	wants := make([][][]Match, len(queries))
	for i, q := range queries {
		widest := o.linear(q, ks[len(ks)-1])
		for _, k := range ks {
			var w []Match
			for _, m := range widest {
				if m.Distance <= k {
					w = append(w, m)
				}
			}
			wants[i] = append(wants[i], w)
		}
	}
	for _, impl := range impls {
		if impl.name == "boltmem" {
			continue // its tables are a MemIndex (mem), decoded as TestBoltBlocksMatchOracle checks
		}
		t.Run(fmt.Sprintf("%s/n=%d", impl.name, len(fps)), func(t *testing.T) {
			var x Index
			if impl.name == "bolt" {
				// Page-sized blocks, and a delta that stays one.
				bx := mustOpenBolt(t, filepath.Join(t.TempDir(), "x.db"), BoltOptions{Layout: l, NoSync: true})
				bx.minDelta = len(fps)
				x = bx
			} else {
				x = impl.open(t, l)
			}
			if err := x.(interface {
				AddBatch(context.Context, []uint64, []Fingerprint) error
			}).AddBatch(ctx, ids[:half], fps[:half]); err != nil {
				t.Fatal(err)
			}
			for i := half; i < len(fps); i++ {
				add(t, x, ids[i], fps[i])
			}
			for i, q := range queries {
				for j, k := range ks {
					got, err := x.Near(ctx, q, k)
					if err != nil {
						t.Fatal(err)
					}
					if want := wants[i][j]; !equalMatches(got, want) {
						t.Fatalf("Near(%v, %d) = %v, want %v", q, k, got, want)
					}
				}
			}
		})
	}
}

// TestGrowHuge checks that growHuge keeps the keys and makes the room
// asked for, for an array large enough to be advised to take huge pages.
func TestGrowHuge(t *testing.T) {
	s := make([]uint64, 1<<20) // 8 MiB
	for i := range s {
		s[i] = uint64(i) * 0x9e3779b97f4a7c15
	}
	g := growHuge(s, 10)
	if len(g) != len(s) || cap(g) < len(s)+10 {
		t.Fatalf("growHuge: len %d cap %d, want len %d cap >= %d", len(g), cap(g), len(s), len(s)+10)
	}
	for i := range g {
		if g[i] != s[i] {
			t.Fatalf("growHuge: element %d = %#x, want %#x", i, g[i], s[i])
		}
	}
	if h := growHuge(g, 5); &h[0] != &g[0] {
		t.Errorf("growHuge with room to spare moved the array")
	}
}
