package contentseen

import (
	"context"
	"flag"
	"math/bits"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"
)

var seedFlag = flag.Uint64("seed", 0, "seed for the random index tests (0: from the clock)")

// testSeed returns the seed for a random test and logs it, so that a
// failure can be replayed with -seed.
func testSeed(t testing.TB) uint64 {
	s := *seedFlag
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -seed %d)", s, s)
	return s
}

// oracle is the simple model of an index: a map from fingerprint to the
// first id recorded with it. Used only by tests.
type oracle map[Fingerprint]uint64

func (o oracle) add(id uint64, fp Fingerprint) {
	if _, ok := o[fp]; !ok {
		o[fp] = id
	}
}

// linear returns every stored fingerprint within k of q by scanning all.
func (o oracle) linear(q Fingerprint, k int) []Match {
	var ms []Match
	for fp, id := range o {
		if d := Distance(fp, q); d <= k {
			ms = append(ms, Match{ID: id, Fingerprint: fp, Distance: d})
		}
	}
	sortMatches(ms)
	return ms
}

// probe returns every stored fingerprint within k <= 3 of q by looking up
// each of the 1 + 64 + 2016 + 41664 = 43,745 fingerprints within 3 bits.
func (o oracle) probe(q Fingerprint, k int) []Match {
	var ms []Match
	look := func(fp Fingerprint, d int) {
		if id, ok := o[fp]; ok {
			ms = append(ms, Match{ID: id, Fingerprint: fp, Distance: d})
		}
	}
	n := 0
	look(q, 0)
	n++
	for i := 0; i < 64 && k >= 1; i++ {
		look(q^1<<i, 1)
		n++
		for j := i + 1; j < 64 && k >= 2; j++ {
			look(q^1<<i^1<<j, 2)
			n++
			for l := j + 1; l < 64 && k >= 3; l++ {
				look(q^1<<i^1<<j^1<<l, 3)
				n++
			}
		}
	}
	if k >= 3 && n != 43745 {
		panic("probe enumerated the wrong number of fingerprints")
	}
	sortMatches(ms)
	return ms
}

func TestOraclesAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 1))
	o := oracle{}
	base := Fingerprint(rng.Uint64())
	for i := range 200 {
		o.add(uint64(i), plant(rng, base, i%6))
	}
	for k := range 4 {
		if got, want := o.probe(base, k), o.linear(base, k); !equalMatches(got, want) {
			t.Errorf("k=%d: probe = %v, linear = %v", k, got, want)
		}
	}
}

// plant returns fp with d distinct random bits flipped.
func plant(rng *rand.Rand, fp Fingerprint, d int) Fingerprint {
	for _, b := range rng.Perm(64)[:d] {
		fp ^= 1 << uint(b)
	}
	return fp
}

// testLayouts are the built-in layouts and a few generated ones.
func testLayouts(t testing.TB) []Layout {
	var ls []Layout
	for _, name := range []string{Layout4x16, Layout10x28, LayoutGoogle16} {
		l, err := LayoutByName(name)
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	for _, g := range []struct {
		k, lead int
		blocks  []int
	}{
		{3, 2, []int{13, 13, 13, 13, 12}},
		{2, 1, []int{22, 21, 21}},
		{2, 2, []int{16, 16, 16, 16}},
		{4, 2, []int{11, 11, 11, 11, 10, 10}},
		{1, 1, []int{32, 32}},
		{0, 1, []int{64}},
		{5, 2, []int{9, 9, 9, 9, 7, 7, 7, 7}},
		// Multi-probe: ProbeRadius 1 up to k=7, 2 at k=8 (4x16's blocks);
		// 1 up to k=9 on five blocks.
		{8, 1, []int{16, 16, 16, 16}},
		{9, 1, []int{13, 13, 13, 13, 12}},
	} {
		l, err := NewLayout(g.k, g.blocks, g.lead)
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	return ls
}

// impls open an empty index of each implementation with layout l.
var impls = []struct {
	name string
	open func(t testing.TB, l Layout) Index
}{
	{"mem", func(t testing.TB, l Layout) Index { return NewMemIndex(l) }},
	{"bolt", func(t testing.TB, l Layout) Index {
		return mustOpenBolt(t, filepath.Join(t.TempDir(), "x.db"), BoltOptions{Layout: l, NoSync: true})
	}},
	{"boltmem", func(t testing.TB, l Layout) Index { // the tables held in memory too
		return mustOpenBolt(t, filepath.Join(t.TempDir(), "x.db"), BoltOptions{Layout: l, NoSync: true, MemoryLimit: 1 << 30})
	}},
}

// TestNearMatchesOracle stores random fingerprints with planted neighbours
// at distances 0..k+1 of some bases and checks that every layout and every
// implementation returns exactly the oracle's set for every k.
func TestNearMatchesOracle(t *testing.T) {
	seed := testSeed(t)
	ctx := context.Background()
	for _, l := range testLayouts(t) {
		for _, impl := range impls {
			if impl.name == "boltmem" && l.Name() != Layout4x16 && l.ProbeRadius(testMaxK(l)) == 0 {
				// Its tables are a MemIndex (mem, every layout) decoded from
				// the blocks (TestBoltBlocksMatchOracle, every layout): the
				// default layout and the multi-probe ones suffice here.
				continue
			}
			t.Run(impl.name+"/"+l.Name(), func(t *testing.T) {
				t.Parallel() // each case has its own index, oracle and generator
				rng := rand.New(rand.NewPCG(seed, uint64(len(l.Name()))))
				x := impl.open(t, l)
				o := oracle{}
				var ids []uint64
				var fps, queries []Fingerprint
				id := uint64(0)
				put := func(fp Fingerprint) {
					id++
					ids, fps = append(ids, id), append(fps, fp)
					o.add(id, fp)
				}
				for range 150 {
					put(Fingerprint(rng.Uint64()))
				}
				kmax := testMaxK(l)
				for range 12 {
					base := Fingerprint(rng.Uint64())
					queries = append(queries, base)
					for d := 0; d <= kmax+1; d++ {
						for range 2 {
							put(plant(rng, base, d))
						}
					}
					// Same distances, flips packed in one block: the hard case
					// for a table layout.
					put(base ^ Fingerprint(uint64(1)<<uint(l.K()+1)-1)<<uint(rng.IntN(64-l.K())))
					put(base ^ Fingerprint(uint64(1)<<uint(kmax+1)-1)<<uint(rng.IntN(64-kmax)))
				}
				for range 20 {
					queries = append(queries, Fingerprint(rng.Uint64()), plant(rng, fps[rng.IntN(len(fps))], rng.IntN(kmax+2)))
				}
				// Half one by one, half in one batch where there is one.
				half := len(fps) / 2
				for i := range half {
					add(t, x, ids[i], fps[i])
				}
				type batcher interface {
					AddBatch(context.Context, []uint64, []Fingerprint) error
				}
				if b, ok := x.(batcher); ok {
					if err := b.AddBatch(ctx, ids[half:], fps[half:]); err != nil {
						t.Fatal(err)
					}
				} else {
					for i := half; i < len(fps); i++ {
						add(t, x, ids[i], fps[i])
					}
				}
				if x.Len() != len(o) {
					t.Errorf("Len() = %d, want %d", x.Len(), len(o))
				}
				for _, q := range queries {
					for k := 0; k <= kmax; k++ {
						got, err := x.Near(ctx, q, k)
						if err != nil {
							t.Fatal(err)
						}
						want := o.linear(q, k)
						if !equalMatches(got, want) {
							t.Fatalf("Near(%v, %d) = %v, want %v", q, k, got, want)
						}
						if k <= 3 && rng.IntN(8) == 0 {
							if p := o.probe(q, k); !equalMatches(p, want) {
								t.Fatalf("probe oracle(%v, %d) = %v, linear %v", q, k, p, want)
							}
						}
					}
				}
			})
		}
	}
}

// TestSeenMatchesOracle replays random Seen calls with many near-duplicates
// against the oracle's model of Seen.
func TestSeenMatchesOracle(t *testing.T) {
	seed := testSeed(t)
	ctx := context.Background()
	for _, impl := range impls {
		t.Run(impl.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 2))
			x := impl.open(t, DefaultLayout())
			o := oracle{}
			var bases []Fingerprint
			for i := range 400 {
				fp := Fingerprint(rng.Uint64())
				if len(bases) > 0 && rng.IntN(2) == 0 {
					fp = plant(rng, bases[rng.IntN(len(bases))], rng.IntN(6))
				} else {
					bases = append(bases, fp)
				}
				id := uint64(rng.IntN(1000))
				var want Match
				ms := o.linear(fp, 3)
				if len(ms) > 0 {
					want = ms[0]
				} else {
					o.add(id, fp)
				}
				m, found, err := x.Seen(ctx, id, fp)
				if err != nil || found != (len(ms) > 0) || m != want {
					t.Fatalf("call %d: Seen(%d, %v) = %+v, %v, %v; want %+v, %v", i, id, fp, m, found, err, want, len(ms) > 0)
				}
			}
		})
	}
}

func TestMemIndexMergesDelta(t *testing.T) {
	// Enough inserts to merge the delta into the base several times, and a
	// directory of more than one bit.
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 3))
	for _, l := range testLayouts(t)[:3] {
		x := NewMemIndex(l)
		o := oracle{}
		var fps []Fingerprint
		for i := range 3000 {
			fp := Fingerprint(rng.Uint64())
			if i%3 == 0 && i > 0 {
				fp = plant(rng, fps[rng.IntN(len(fps))], rng.IntN(5))
			}
			fps = append(fps, fp)
			add(t, x, uint64(i), fp)
			o.add(uint64(i), fp)
		}
		if got := x.tabs[0].dirBits; got < 2 {
			t.Errorf("%s: dirBits = %d at %d keys, want a real directory", l.Name(), got, len(o))
		}
		for range 300 {
			q := plant(rng, fps[rng.IntN(len(fps))], rng.IntN(5))
			got, err := x.Near(context.Background(), q, 3)
			if want := o.linear(q, 3); err != nil || !equalMatches(got, want) {
				t.Fatalf("%s: Near(%v) = %v, %v; want %v", l.Name(), q, got, err, want)
			}
		}
	}
}

func TestPlantedDistance(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for d := range 10 {
		if got := bits.OnesCount64(uint64(plant(rng, 0, d))); got != d {
			t.Errorf("plant(0, %d) has %d bits", d, got)
		}
	}
}

// probesPerQuery returns the prefixes a query at distance k reads.
func probesPerQuery(l Layout, k int) int {
	n := 0
	for t := range l.Tables() {
		n += probeCount(l.PrefixBits(t), l.ProbeRadius(k))
	}
	return n
}

// testMaxK returns the largest k the tests query l at: K, and beyond it
// up to 4 more (multi-probe) while a query reads at most 256 prefixes.
func testMaxK(l Layout) int {
	kmax := l.K()
	for kmax < min(l.MaxK(), l.K()+4) && probesPerQuery(l, kmax+1) <= 256 {
		kmax++
	}
	return kmax
}
