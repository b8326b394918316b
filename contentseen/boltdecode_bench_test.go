package contentseen

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// BenchmarkBlockScan measures scanSegments decoding a whole full block of
// table 1 (no ids) at the density of a 10M table, with no match: the
// per-entry cost of a query's decoding loop, one segment alone and two
// decoded together.
//
//	go test -run '^$' -bench BlockScan ./contentseen/
func BenchmarkBlockScan(b *testing.B) {
	x := &BoltIndex{layout: DefaultLayout(), blockLimit: maxBlock, format: formatNumber(formatVersion)}
	x.codes.init(x.layout.Tables())
	rng := rand.New(rand.NewPCG(1, 2))
	ps := make([]uint64, 4000)
	start := rng.Uint64() >> 1
	for i := range ps {
		ps[i] = start + rng.Uint64N(1<<44)*uint64(len(ps))
	}
	slices.Sort(ps)
	ps = slices.Compact(ps)
	es := make([]entry, len(ps))
	var hist [hSymbols]uint64
	for i, p := range ps {
		es[i].p = p
		if i > 0 {
			sym, _ := symbolOf(uint(bits.LeadingZeros64(ps[i-1]^p)), p)
			hist[sym]++
		}
	}
	c := buildCode(&hist)
	x.codes.register(1, 1, c)
	var scratch [hSymbols]uint64
	n := fits(es, c, false, maxBlock, x.restartRule(1), &scratch)
	v := encodeBlock(es[:n], 1, c, false, x.restartRule(1))
	key := blockKey(1, es[0].p)
	for _, streams := range []int{1, 2} {
		b.Run(fmt.Sprintf("segments=%d", streams), func(b *testing.B) {
			segs := make([]blockSegment, streams)
			for i := range segs {
				segs[i] = blockSegment{t: 1, key: key, v: v, hi: ^uint64(0)}
			}
			b.ReportAllocs()
			for b.Loop() {
				ms, err := x.scanSegments(nil, segs, 0, nil)
				if err != nil || len(ms) != 0 {
					b.Fatal(err, ms)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n*streams), "ns/entry")
			b.ReportMetric(float64(n), "entries")
		})
	}
}
