package contentseen

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// BenchmarkJoinIndex measures JoinTx: a batch joined against a stored set
// of n fingerprints bulk-loaded into a bbolt index (benchIndex: built once
// per run and layout, shared by the batch sizes), one goroutine. One op is
// one whole join; b.SetBytes(8*n), so MB/s / 8 is millions of stored
// fingerprints per second, and Mfps/cpu-s the same per CPU-second. The
// batch is random, one in 100 a neighbour of one of the stored set's
// planted bases. The index's pages are in the page cache after the first
// op (the file is a few tens of MB per million).
//
//	go test -run '^$' -bench 'JoinIndex' -benchtime 3x -count 3 -cpu 1 ./contentseen/
func BenchmarkJoinIndex(b *testing.B) {
	b.Cleanup(func() { benchCleanup(b) })
	for _, name := range []string{Layout4x16, Layout10x28} {
		l, err := LayoutByName(name)
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range benchSizes(b) {
			for _, nb := range []int{1e4, 1e5, 1e6} {
				b.Run(fmt.Sprintf("layout=%s/n=%.0e/batch=%.0e", name, float64(n), float64(nb)), func(b *testing.B) {
					x := benchIndex(b, "bolt", l, n).(*BoltIndex)
					r := rand.New(rand.NewPCG(uint64(nb), 5))
					ids := make([]uint64, nb)
					fps := make([]Fingerprint, nb)
					for i := range fps {
						ids[i], fps[i] = uint64(i), Fingerprint(r.Uint64())
						if i%100 == 0 {
							fps[i] = plant(r, baseFP(i/100%2000), 1)
						}
					}
					j, err := NewJoiner(l, 3, ids, fps)
					if err != nil {
						b.Fatal(err)
					}
					ctx := context.Background()
					pairs := 0
					b.SetBytes(8 * int64(n))
					b.ReportAllocs()
					c0, ok := cpuTime()
					for b.Loop() {
						pairs = 0
						err := x.db.View(func(tx *bolt.Tx) error {
							return x.JoinTx(ctx, tx, j, func(Pair) error { pairs++; return nil })
						})
						if err != nil {
							b.Fatal(err)
						}
					}
					reportPerCPU(b, c0, ok, b.N*n)
					b.ReportMetric(float64(pairs), "pairs/op")
				})
			}
		}
	}
}
