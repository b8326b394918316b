package contentseen

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// tableSpace is what a BoltIndex's tables cost per stored fingerprint.
type tableSpace struct {
	n int
	// fpBits is, per table, the bits of its blocks per fingerprint: values
	// (ids excluded), keys and bbolt's 16-byte element headers.
	fpBits []float64
	// idBits is table 0's id bytes per fingerprint, in bits.
	idBits float64
	// pageBits is the tables bucket's pages (leaf and branch, free space
	// included) per fingerprint per table, in bits.
	pageBits float64
}

// floorBits is log2(C(2^64, n))/n, the fewest bits per fingerprint any
// encoding of a set of n random 64-bit fingerprints can average.
func floorBits(n int) float64 {
	N := float64(n)
	lg := func(x float64) float64 { v, _ := math.Lgamma(x); return v }
	// log C(M, N) = lgamma(M+1) - lgamma(N+1) - lgamma(M-N+1); with M =
	// 2^64 the first and last differ by about N log M - N^2/(2M).
	const logM = 64 * math.Ln2
	return (N*logM - lg(N+1)) / N / math.Ln2
}

func measureSpace(t testing.TB, x *BoltIndex) tableSpace {
	t.Helper()
	s := tableSpace{fpBits: make([]float64, x.layout.Tables())}
	err := x.db.View(func(tx *bolt.Tx) error {
		top, err := x.top(tx)
		if err != nil {
			return err
		}
		s.n = x.LenTx(tx)
		tables := top.Bucket(tablesBucket)
		bytes := make([]int, x.layout.Tables())
		idBytes := 0
		err = tables.ForEach(func(k, v []byte) error {
			tab := int(k[0])
			bytes[tab] += len(k) + len(v) + 16
			if tab == 0 {
				b, err := x.parseBlock(0, k, v)
				if err != nil {
					return err
				}
				idBytes += 2 + 1 + len(b.ids)
			}
			return nil
		})
		if err != nil {
			return err
		}
		bytes[0] -= idBytes
		for tab, b := range bytes {
			s.fpBits[tab] = float64(8*b) / float64(s.n)
		}
		s.idBits = float64(8*idBytes) / float64(s.n)
		st := tables.Stats()
		pages := st.LeafPageN + st.BranchPageN + st.LeafOverflowN + st.BranchOverflowN
		s.pageBits = float64(8*pages*x.db.Info().PageSize) / float64(s.n) / float64(x.layout.Tables())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestBoltSpaceNearFloor bulk-loads 50,000 random fingerprints (200,000
// with SIMCRAWL_BIG=1) and checks that every table takes at most 3 bits
// per fingerprint more than the floor (issue 6's target) and that pages
// are full, and then that both still hold after merging a delta of random
// inserts into the blocks.
func TestBoltSpaceNearFloor(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an index of 50,000")
	}
	n := testSize(50_000, 200_000)
	rng := rand.New(rand.NewPCG(testSeed(t), 25))
	x := mustOpenBolt(t, filepath.Join(t.TempDir(), "x.db"), BoltOptions{NoSync: true})
	defer x.Close()
	ctx := context.Background()
	addRandom(t, x, rng, n)
	floor := floorBits(n)
	s := measureSpace(t, x)
	t.Logf("bulk n=%d: floor %.2f bits; per table %.2f bits (ids %.1f bits in table 0); pages %.2f bits per table", s.n, floor, s.fpBits, s.idBits, s.pageBits)
	for tab, b := range s.fpBits {
		if b > floor+3 {
			t.Errorf("bulk: table %d takes %.2f bits per fingerprint, floor %.2f + 3", tab, b, floor)
		}
	}
	if fill := s.pageBits - s.idBits/float64(len(s.fpBits)); fill > floor+pageSlack {
		t.Errorf("bulk: %.2f bits of pages per fingerprint per table, ids aside (blocks %.2f): pages not filled", fill, s.fpBits)
	}
	x.minDelta = 1 << 30
	err := x.db.Update(func(tx *bolt.Tx) error {
		for i := range n / 10 {
			if err := x.AddTx(tx, uint64(n+i), Fingerprint(rng.Uint64())); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	floor = floorBits(x.Len())
	s = measureSpace(t, x)
	t.Logf("after a merge of %d: floor %.2f bits; per table %.2f bits; pages %.2f bits per table", n/10, floor, s.fpBits, s.pageBits)
	for tab, b := range s.fpBits {
		if b > floor+3 {
			t.Errorf("after a merge: table %d takes %.2f bits per fingerprint, floor %.2f + 3", tab, b, floor)
		}
	}
	// Merges re-cut runs of blocks full and bbolt packs page-sized blocks
	// full: a merge that left half-full blocks, or half-full pages (bbolt
	// splits at half a page by default, and never splits a node of four
	// blocks or fewer), took 97 bits here.
	if fill := s.pageBits - s.idBits/float64(len(s.fpBits)); fill > floor+pageSlack {
		t.Errorf("after a merge: %.2f bits of pages per fingerprint per table, ids aside (blocks %.2f): pages not filled", fill, s.fpBits)
	}
}

// pageSlack is how far above the floor the pages may be, per fingerprint
// per table, ids aside: the blocks' 3 bits, plus page headers and the
// last page of each run, one page being 0.15 bits at this test's size.
// Storage format 4's restart points (at prefix ranges) put the blocks
// about half a bit higher than format 3's, and 4 bits then failed one seed
// in about 30 by a single page (53.78 against 53.70); a merge that left
// pages half full takes 97.
const pageSlack = 4.5

func TestFloorBits(t *testing.T) {
	// Issue 6's figures: 45.5 / 42.2 / 38.9 bits at 1M / 10M / 100M.
	for _, c := range []struct {
		n    int
		want float64
	}{{1e6, 45.5}, {1e7, 42.2}, {1e8, 38.9}} {
		if got := floorBits(c.n); math.Abs(got-c.want) > 0.05 {
			t.Errorf("floorBits(%d) = %.2f, want %.1f", c.n, got, c.want)
		}
	}
}

// TestBoltSmallMergesKeepBlocksFull merges small deltas (half a percent of
// the index, as Checkpoint may meet; the merger waits for N/64) into a bulk-built
// index, five times, and checks that the tables hold every entry and grow
// about as much as their entries do. Most blocks then receive one new entry or none: a run
// ending at the first block that receives none needed a block more than
// it had for a few bytes of overflow, and five such merges left the
// tables half as big again here.
func TestBoltSmallMergesKeepBlocksFull(t *testing.T) {
	// 1,000 blocks a table and 250 new entries a round (400 and 100 by
	// default): most blocks receive one new entry or none.
	n, rounds, per := testSize(20_000, 50_000), 5, testSize(100, 250)
	rng := rand.New(rand.NewPCG(testSeed(t), 26))
	x := mustOpenBolt(t, filepath.Join(t.TempDir(), "x.db"), BoltOptions{NoSync: true})
	defer x.Close()
	x.blockLimit = 400 // about 50 entries a block
	x.minDelta = 1 << 30
	o := addRandom(t, x, rng, n)
	before := checkBlocks(t, x, o)
	next := uint64(n)
	for r := range rounds {
		err := x.db.Update(func(tx *bolt.Tx) error {
			for range per {
				fp := Fingerprint(rng.Uint64())
				if err := x.AddTx(tx, next, fp); err != nil {
					return err
				}
				o.add(next, fp)
				next++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		after := checkBlocks(t, x, o) // merges, then checks every entry
		grown := float64(n+(r+1)*per) / float64(n)
		for tab := range before {
			// The entries grew by grown. Allow 5% more blocks: a run
			// that cannot absorb its overflow within absorbBlocks adds
			// one (this measured 2-3% over; ending runs at the first
			// block receiving nothing measured 50%).
			if limit := float64(before[tab]) * grown * 1.05; float64(after[tab]) > limit {
				t.Errorf("after %d merges of %d: table %d has %d blocks, from %d (at most %.0f)", r+1, per, tab, after[tab], before[tab], limit)
			}
		}
	}
}

// addRandom bulk-loads n random fingerprints with ids 0..n-1 into x and
// returns them as an oracle.
func addRandom(t *testing.T, x *BoltIndex, rng *rand.Rand, n int) oracle {
	t.Helper()
	ids := make([]uint64, n)
	fps := make([]Fingerprint, n)
	o := oracle{}
	for i := range n {
		ids[i], fps[i] = uint64(i), Fingerprint(rng.Uint64())
		o.add(ids[i], fps[i])
	}
	if err := x.AddBatch(context.Background(), ids, fps); err != nil {
		t.Fatal(err)
	}
	return o
}
