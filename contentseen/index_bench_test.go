package contentseen

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Index benchmarks. The 10M ones need SIMCRAWL_BIG=1 (they build for
// minutes and hold GBs); all of them only run with -bench.
//
//	go test -run '^$' -bench 'Index' -benchtime 200000x -count 5 ./contentseen/
//	SIMCRAWL_BIG=1 go test -run '^$' -bench 'Index.*n=1e7' -benchtime 200000x -count 3 -timeout 2h ./contentseen/
//
// SIMCRAWL_BENCH_DIR=DIR keeps the bbolt indexes in DIR (one file per
// layout and size, named after them) and reuses a file found there instead
// of building it again: a 10M one takes minutes to build, and two test
// binaries compared on one file read the same blocks. The file is the set
// getBenchSet makes; delete it after changing that.

// benchSizes are the stored set sizes; 10M only with SIMCRAWL_BIG=1.
func benchSizes(b *testing.B) []int {
	sizes := []int{1e6}
	if os.Getenv("SIMCRAWL_BIG") == "1" && !testing.Short() {
		sizes = append(sizes, 1e7)
	}
	return sizes
}

// benchSet is a stored set of n fingerprints: 10,000 of them planted at
// distance 0..4 around 2,000 bases (one at each distance), the rest random;
// and queries: half of them 1 bit from a base (about 4 matches within 3),
// half random fingerprints (almost never a match).
type benchSet struct {
	ids     []uint64
	fps     []Fingerprint
	queries []Fingerprint
}

var (
	benchSetsMu sync.Mutex
	benchSets   = map[int]*benchSet{}
	benchIdxs   = map[string]Index{} // built indexes, reused across -count runs
	benchDirs   []string             // of the bbolt indexes in benchIdxs
)

// benchCleanup closes the bbolt indexes of benchIndex and removes their
// files; the memory ones stay for the next -count run.
func benchCleanup(b *testing.B) {
	benchSetsMu.Lock()
	defer benchSetsMu.Unlock()
	for key, x := range benchIdxs {
		if bx, ok := x.(*BoltIndex); ok {
			if err := bx.Close(); err != nil {
				b.Error(err)
			}
			delete(benchIdxs, key)
		}
	}
	for _, dir := range benchDirs {
		if err := os.RemoveAll(dir); err != nil {
			b.Error(err)
		}
	}
	benchDirs = nil
}

// closeBenchIndex closes the open bbolt index under key, if any: a kept
// file is opened by one index at a time.
func closeBenchIndex(b *testing.B, key string) {
	benchSetsMu.Lock()
	defer benchSetsMu.Unlock()
	if x, ok := benchIdxs[key].(*BoltIndex); ok {
		if err := x.Close(); err != nil {
			b.Fatal(err)
		}
		delete(benchIdxs, key)
	}
}

// benchBoltPath returns where the bbolt index of layout l over the set of
// size n goes, and whether it is kept across runs (SIMCRAWL_BENCH_DIR).
// A file not kept is in a new temporary directory that benchCleanup
// removes: files of GBs must not outlive the run.
func benchBoltPath(b *testing.B, l Layout, n int) (string, bool) {
	if dir := os.Getenv("SIMCRAWL_BENCH_DIR"); dir != "" {
		name := fmt.Sprintf("bench-%s-%d.db", strings.ReplaceAll(l.Name(), "/", "_"), n)
		return filepath.Join(dir, name), true
	}
	dir, err := os.MkdirTemp("", "simcrawl-bench-")
	if err != nil {
		b.Fatal(err)
	}
	benchDirs = append(benchDirs, dir)
	return filepath.Join(dir, "index.db"), false
}

func getBenchSet(n int) *benchSet {
	benchSetsMu.Lock()
	defer benchSetsMu.Unlock()
	if s := benchSets[n]; s != nil {
		return s
	}
	rng := rand.New(rand.NewPCG(uint64(n), 42))
	s := &benchSet{ids: make([]uint64, n), fps: make([]Fingerprint, n)}
	const bases = 2000
	planted := min(n, 5*bases)
	for i := range n {
		s.ids[i] = uint64(i)
		if i < planted {
			s.fps[i] = plant(rng, baseFP(i%bases), i/bases%5)
		} else {
			s.fps[i] = Fingerprint(rng.Uint64())
		}
	}
	for i := range 1 << 14 {
		if i%2 == 0 {
			s.queries = append(s.queries, plant(rng, baseFP(i%bases), 1))
		} else {
			s.queries = append(s.queries, Fingerprint(rng.Uint64()))
		}
	}
	benchSets[n] = s
	return s
}

func baseFP(i int) Fingerprint { return Fingerprint(0x9e3779b97f4a7c15 * uint64(i+1)) }

// benchIndex returns a built index of the named kind over the set of size
// n, building it on first use.
func benchIndex(b *testing.B, kind string, l Layout, n int) Index {
	key := fmt.Sprintf("%s/%s/%d", kind, l.Name(), n)
	benchSetsMu.Lock()
	x := benchIdxs[key]
	benchSetsMu.Unlock()
	if x != nil {
		return x
	}
	s := getBenchSet(n)
	start := time.Now()
	ctx := context.Background()
	switch kind {
	case "mem":
		m := NewMemIndex(l)
		if err := m.AddBatch(ctx, s.ids, s.fps); err != nil {
			b.Fatal(err)
		}
		x = m
	case "bolt", "boltmem":
		path, keep := benchBoltPath(b, l, n)
		_, err := os.Stat(path)
		reuse := keep && err == nil
		o := BoltOptions{Layout: l, NoSync: true}
		if kind == "boltmem" {
			o.MemoryLimit = 8 << 30 // the tables in memory: queries do not read the blocks
			if keep {
				closeBenchIndex(b, fmt.Sprintf("bolt/%s/%d", l.Name(), n)) // the same file
			}
		} else if keep {
			closeBenchIndex(b, fmt.Sprintf("boltmem/%s/%d", l.Name(), n))
		}
		bx, err := OpenBolt(path, o)
		if err != nil {
			b.Fatal(err)
		}
		if reuse && bx.Len() != n {
			b.Fatalf("%s holds %d fingerprints, not %d: delete it", path, bx.Len(), n)
		}
		if !reuse {
			if err := bx.AddBatch(ctx, s.ids, s.fps); err != nil { // builds the mirror after, for boltmem
				b.Fatal(err)
			}
		}
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		if kind == "boltmem" && !bx.HoldsTablesInMemory() {
			b.Fatal("the index does not hold its tables in memory")
		}
		b.Logf("%s %s n=%d: built in %v (reused %s: %v), %d bytes on disk, %.1f bytes per fingerprint",
			kind, l.Name(), n, time.Since(start).Round(time.Millisecond), path, reuse, fi.Size(), float64(fi.Size())/float64(bx.Len()))
		x = bx
	}
	if kind == "mem" {
		b.Logf("mem %s n=%d: built in %v", l.Name(), n, time.Since(start).Round(time.Millisecond))
	}
	benchSetsMu.Lock()
	benchIdxs[key] = x
	benchSetsMu.Unlock()
	return x
}

// BenchmarkIndexNear measures k=3 queries, half of them with matches, and
// reports the median and 99th percentile of the per-query time (measured
// with time.Now around each call, which adds some tens of ns).
func BenchmarkIndexNear(b *testing.B) {
	b.Cleanup(func() { benchCleanup(b) })
	for _, kind := range []string{"mem", "bolt"} {
		for _, name := range []string{Layout4x16, Layout10x28, LayoutGoogle16} {
			l, err := LayoutByName(name)
			if err != nil {
				b.Fatal(err)
			}
			for _, n := range benchSizes(b) {
				b.Run(fmt.Sprintf("%s/%s/n=%.0e", kind, name, float64(n)), func(b *testing.B) {
					benchmarkNear(b, kind, l, n, 3)
				})
			}
		}
	}
}

// BenchmarkIndexNearWide measures queries at a wider radius than the
// layout's K (multi-probe: Layout.ProbeRadius), as a two-stage judge asks
// for candidates, on the same sets as BenchmarkIndexNear: in a MemIndex
// (mem), a BoltIndex reading its blocks (bolt) and one holding its tables
// in memory (boltmem, BoltOptions.MemoryLimit).
//
//	go test -run '^$' -bench 'IndexNearWide/mem' -benchtime 20000x -count 5 ./contentseen/
func BenchmarkIndexNearWide(b *testing.B) {
	b.Cleanup(func() { benchCleanup(b) })
	for _, kind := range []string{"mem", "bolt", "boltmem"} {
		for _, c := range []struct {
			layout string
			k      int
		}{
			{Layout4x16, 7},          // 4 x 17 prefixes
			{Layout4x16, 10},         // 4 x 137 prefixes
			{"k5/22-21-21/lead1", 5}, // 3 x 23 prefixes, 0.75x the entries
			{"k5/22-21-21/lead1", 8}, // 3 x 254 prefixes
		} {
			l, err := LayoutByName(c.layout)
			if err != nil {
				b.Fatal(err)
			}
			for _, n := range benchSizes(b) {
				name := strings.ReplaceAll(c.layout, "/", "_")
				b.Run(fmt.Sprintf("%s/%s/k=%d/n=%.0e", kind, name, c.k, float64(n)), func(b *testing.B) {
					benchmarkNear(b, kind, l, n, c.k)
				})
			}
		}
	}
}

func benchmarkNear(b *testing.B, kind string, l Layout, n, k int) {
	x := benchIndex(b, kind, l, n)
	qs := getBenchSet(n).queries
	ctx := context.Background()
	for _, q := range qs { // warm: touch every page a query reads
		if _, err := x.Near(ctx, q, k); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, 1<<16)
	found, i := 0, 0
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		ms, err := x.Near(ctx, qs[i%len(qs)], k)
		lat[i%len(lat)] = time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		found += len(ms)
		i++
	}
	lat = lat[:min(i, len(lat))]
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
	b.ReportMetric(float64(found)/float64(i), "matches/op")
}

// BenchmarkIndexMemAdd measures one Add into an in-memory index holding n.
func BenchmarkIndexMemAdd(b *testing.B) {
	for _, n := range benchSizes(b) {
		b.Run(fmt.Sprintf("n=%.0e", float64(n)), func(b *testing.B) {
			s := getBenchSet(n)
			x := NewMemIndex(DefaultLayout())
			if err := x.AddBatch(context.Background(), s.ids, s.fps); err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			b.ReportAllocs()
			for b.Loop() {
				if err := x.Add(context.Background(), rng.Uint64(), Fingerprint(rng.Uint64())); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkIndexBoltSeenDurable measures Seen on a bbolt index with fsync,
// from 1 caller and from many concurrent callers whose calls the committer
// groups into one transaction. It uses RunParallel (pb.Next rather than
// b.Loop) to have concurrent callers. It also reports the bytes on disk
// per stored fingerprint after these random inserts.
func BenchmarkIndexBoltSeenDurable(b *testing.B) {
	for _, callers := range []int{1, 1024} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "index.db")
			x, err := OpenBolt(path, BoltOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer x.Close()
			var next atomic.Uint64
			ctx := context.Background()
			b.ReportAllocs()
			b.SetParallelism(max(1, callers/max(1, runtimeProcs())))
			start := time.Now()
			if callers == 1 {
				for b.Loop() {
					id := next.Add(1)
					if _, _, err := x.Seen(ctx, id, Fingerprint(id*0x9e3779b97f4a7c15)); err != nil {
						b.Fatal(err)
					}
				}
			} else {
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						id := next.Add(1)
						if _, _, err := x.Seen(ctx, id, Fingerprint(id*0x9e3779b97f4a7c15)); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			b.ReportMetric(float64(next.Load())/time.Since(start).Seconds(), "seen/s")
			if fi, err := os.Stat(path); err == nil && x.Len() > 0 {
				b.ReportMetric(float64(fi.Size())/float64(x.Len()), "disk-B/fp")
			}
		})
	}
}

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }

// BenchmarkIndexBoltSeenDurableFull is BenchmarkIndexBoltSeenDurable with
// 1,024 callers on an index bulk-loaded with n fingerprints first, where a
// group's random inserts touch one page per table each rather than the
// few pages of a small index.
func BenchmarkIndexBoltSeenDurableFull(b *testing.B) {
	for _, n := range benchSizes(b) {
		b.Run(fmt.Sprintf("n=%.0e", float64(n)), func(b *testing.B) {
			s := getBenchSet(n)
			path := filepath.Join(b.TempDir(), "index.db")
			x, err := OpenBolt(path, BoltOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer x.Close()
			ctx := context.Background()
			if err := x.AddBatch(ctx, s.ids, s.fps); err != nil {
				b.Fatal(err)
			}
			var next atomic.Uint64
			next.Store(uint64(n))
			b.ReportAllocs()
			b.ResetTimer() // not the load
			b.SetParallelism(max(1, 1024/max(1, runtimeProcs())))
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					id := next.Add(1)
					if _, _, err := x.Seen(ctx, id, Fingerprint(id*0x9e3779b97f4a7c15)); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(next.Load()-uint64(n))/time.Since(start).Seconds(), "seen/s")
			if fi, err := os.Stat(path); err == nil && x.Len() > 0 {
				b.ReportMetric(float64(fi.Size())/float64(x.Len()), "disk-B/fp")
			}
		})
	}
}

// BenchmarkIndexBoltGrowth grows a bbolt index by SeenTx calls with
// random fingerprints, 10,000 per write transaction (one op), without fsync,
// as a crawler batching its own transactions would. It reports the rate and
// the bytes on disk per fingerprint after random inserts (bbolt splits
// pages half full, unlike AddBatch's appends). -benchtime 100x stores 1M.
func BenchmarkIndexBoltGrowth(b *testing.B) {
	path := filepath.Join(b.TempDir(), "index.db")
	x, err := OpenBolt(path, BoltOptions{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	rng := rand.New(rand.NewPCG(1, 7))
	const perTx = 10000
	id := uint64(0)
	start := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		err := x.db.Update(func(tx *bolt.Tx) error {
			for range perTx {
				id++
				if _, _, err := x.SeenTx(tx, id, Fingerprint(rng.Uint64())); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(id)/time.Since(start).Seconds(), "seen/s")
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(fi.Size())/float64(x.Len()), "disk-B/fp")
	b.ReportMetric(float64(x.Len()), "stored")
}
