package crawler

import (
	"context"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/simcrawl/simcrawl/contentseen"
)

// nearestOracle is the obvious definition: the distance from fps[i] to
// its closest other fingerprint.
func nearestOracle(fps []contentseen.Fingerprint, i int) int {
	best := 65
	for j, b := range fps {
		if j != i {
			best = min(best, bits.OnesCount64(uint64(fps[i]^b)))
		}
	}
	return best
}

func randomFingerprints(seed uint64, n int) []contentseen.Fingerprint {
	rng := rand.New(rand.NewPCG(seed, 7))
	fps := make([]contentseen.Fingerprint, n)
	for i := range fps {
		fps[i] = contentseen.Fingerprint(rng.Uint64())
		if i > 0 && i%5 == 0 { // plant a neighbour 0..6 bits from the previous one
			fp := fps[i-1]
			for range rng.IntN(7) {
				fp ^= 1 << rng.IntN(64)
			}
			fps[i] = fp
		}
	}
	return fps
}

func TestNearestNeighboursBruteForce(t *testing.T) {
	fps := randomFingerprints(1, 500)
	got, err := NearestNeighbours(context.Background(), fps)
	if err != nil {
		t.Fatal(err)
	}
	if got.Sampled || got.Pages != len(fps) || len(got.Distances) != len(fps) {
		t.Fatalf("NearestNeighbours(500) = sampled %v, pages %d, %d distances", got.Sampled, got.Pages, len(got.Distances))
	}
	for i, d := range got.Distances {
		if want := nearestOracle(fps, i); d != want {
			t.Errorf("page %d: nearest distance %d, want %d", i, d, want)
		}
	}
}

func TestNearestNeighboursSampled(t *testing.T) {
	fps := randomFingerprints(2, BruteForcePages+1)
	got, err := NearestNeighbours(context.Background(), fps)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Sampled || len(got.Distances) != NeighbourSample {
		t.Fatalf("NearestNeighbours(%d) = sampled %v with %d distances, want a sample of %d", len(fps), got.Sampled, len(got.Distances), NeighbourSample)
	}
	for s := 0; s < NeighbourSample; s += 97 {
		i := s * len(fps) / NeighbourSample
		if want := nearestOracle(fps, i); got.Distances[s] != want {
			t.Errorf("sample %d (page %d): nearest distance %d, want %d", s, i, got.Distances[s], want)
		}
	}
}

func TestNearestNeighboursTiny(t *testing.T) {
	for _, n := range []int{0, 1} {
		got, err := NearestNeighbours(context.Background(), randomFingerprints(3, n))
		if err != nil || len(got.Distances) != 0 {
			t.Errorf("NearestNeighbours(%d fingerprints) = %v, %v; want no distances", n, got.Distances, err)
		}
	}
}

// BenchmarkNearestNeighbours: the brute-force limit (every pair of 20,000)
// and the sampled path (2,000 against 100,000).
func BenchmarkNearestNeighbours(b *testing.B) {
	for _, n := range []int{BruteForcePages, 100000} {
		fps := randomFingerprints(4, n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := NearestNeighbours(context.Background(), fps); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
