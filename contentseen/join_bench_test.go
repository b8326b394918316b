package contentseen

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// BenchmarkJoinProbe measures the map step: stored fingerprints streamed
// through a Joiner over a batch of n, one goroutine (run with -cpu 1 for a
// per-core figure). One op is one stored fingerprint; b.SetBytes(8), so
// MB/s / 8 is millions of stored fingerprints per second.
func BenchmarkJoinProbe(b *testing.B) {
	for _, name := range []string{Layout4x16, Layout10x28} {
		l, err := LayoutByName(name)
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range []int{1e4, 1e5, 1e6} {
			b.Run(fmt.Sprintf("layout=%s/batch=%.0e", name, float64(n)), func(b *testing.B) {
				r := rand.New(rand.NewPCG(1, 2))
				ids := make([]uint64, n)
				fps := make([]Fingerprint, n)
				for i := range fps {
					ids[i], fps[i] = uint64(i), Fingerprint(r.Uint64())
				}
				j, err := NewJoiner(l, 3, ids, fps)
				if err != nil {
					b.Fatal(err)
				}
				// A stream of random stored fingerprints, 1 in 1000 a
				// near-duplicate of a batch one.
				stream := make([]Fingerprint, 1<<16)
				for i := range stream {
					stream[i] = Fingerprint(r.Uint64())
					if i%1000 == 0 {
						stream[i] = fps[r.IntN(n)] ^ 0b1001
					}
				}
				var out []Pair
				b.SetBytes(8)
				b.ReportAllocs()
				i := 0
				c0, ok := cpuTime()
				for b.Loop() {
					out = j.probe(uint64(i), stream[i&(len(stream)-1)], out[:0])
					i++
				}
				reportPerCPU(b, c0, ok, b.N)
			})
		}
	}
}

// BenchmarkJoinPartitions is the whole join over 1M stored fingerprints in
// GOMAXPROCS partitions; one op is one stored fingerprint.
func BenchmarkJoinPartitions(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	const nb, ns = 1e5, 1 << 20
	ids := make([]uint64, nb)
	fps := make([]Fingerprint, nb)
	for i := range fps {
		ids[i], fps[i] = uint64(i), Fingerprint(r.Uint64())
	}
	j, err := NewJoiner(DefaultLayout(), 3, ids, fps)
	if err != nil {
		b.Fatal(err)
	}
	sids := make([]uint64, ns)
	sfps := make([]Fingerprint, ns)
	for i := range sfps {
		sids[i], sfps[i] = uint64(i), Fingerprint(r.Uint64())
	}
	workers := runtime.GOMAXPROCS(0)
	b.SetBytes(8 * ns)
	b.ReportAllocs()
	c0, ok := cpuTime()
	for b.Loop() {
		err := JoinPartitions(context.Background(), j, SplitSlices(sids, sfps, 4*workers), workers, func(Pair) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
	}
	reportPerCPU(b, c0, ok, b.N*ns)
}

// reportPerCPU reports stored fingerprints per CPU-second since c0, in
// millions: on a shared machine the wall-clock MB/s understates the
// per-core speed.
func reportPerCPU(b *testing.B, c0 time.Duration, ok bool, n int) {
	c1, ok1 := cpuTime()
	if ok && ok1 && c1 > c0 {
		b.ReportMetric(float64(n)/(c1-c0).Seconds()/1e6, "Mfps/cpu-s")
	}
}
