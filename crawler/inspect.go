package crawler

import (
	"context"
	"errors"
	"fmt"
	"math/bits"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/frontier"
)

// Read-side helpers for the commands that inspect a crawl (`crawl dups`,
// `crawl stats`). They work on a Data opened read-only.

// Scheme returns the feature scheme (contentseen.Options.String) the
// crawl's index was built with, or "" when the data directory has no
// index.
func (d *Data) Scheme() (string, error) {
	_, scheme, err := d.IndexMeta()
	return scheme, err
}

// IndexMeta returns the layout and the feature scheme the data directory's
// index was built with, both "" when it has no index yet.
func (d *Data) IndexMeta() (layout, scheme string, err error) {
	var ok bool
	if err := d.DB.View(func(tx *bolt.Tx) error {
		layout, scheme, ok = contentseen.ReadBoltMeta(tx, "")
		return nil
	}); err != nil {
		return "", "", fmt.Errorf("crawler: read index meta: %w", err)
	}
	if !ok {
		return "", "", nil
	}
	return layout, scheme, nil
}

// Fingerprinter returns a Fingerprinter with the feature options the
// crawl's index was built with, and their text (Scheme), so that texts are
// explained exactly as the crawl weighed them whatever config.yaml says
// today. An index built with an IDF table cannot be reproduced from its
// scheme: that is an error.
func (d *Data) Fingerprinter() (*contentseen.Fingerprinter, string, error) {
	scheme, err := d.Scheme()
	if err != nil {
		return nil, "", err
	}
	if scheme == "" {
		return nil, "", errors.New("crawler: the data directory has no ContentSeen index")
	}
	o, err := contentseen.ParseScheme(scheme) // a scheme without "tok" is tokenizer 1
	if err != nil {
		return nil, scheme, fmt.Errorf("crawler: index scheme: %w", err)
	}
	f, err := contentseen.NewFingerprinter(o)
	if err != nil {
		return nil, scheme, fmt.Errorf("crawler: %w", err)
	}
	return f, scheme, nil
}

// FrontierStats returns the frontier's persisted counts.
func (d *Data) FrontierStats() (frontier.Stats, error) {
	var s frontier.Stats
	err := d.DB.View(func(tx *bolt.Tx) error {
		var err error
		s, err = frontier.ReadStats(tx, "")
		return err
	})
	return s, err
}

// Limits of NearestNeighbours: up to BruteForcePages fingerprints every one
// is compared with every other (n²/2 popcounts: 2·10⁸ for 20,000, 0.13 s
// on a shared 2-core machine); above that NeighbourSample fingerprints,
// evenly spaced in page order, are each compared with all (0.2 s for
// 100,000 fingerprints, linear in their number). Median of 5 runs of
// BenchmarkNearestNeighbours.
const (
	BruteForcePages = 20000
	NeighbourSample = 2000
)

// Neighbours is the result of NearestNeighbours, a plain value.
type Neighbours struct {
	// Distances[i] is the Hamming distance from one page to its nearest
	// other page; one entry per page examined.
	Distances []int
	// Sampled is true when only NeighbourSample pages were examined.
	Sampled bool
	// Pages is the number of fingerprints searched.
	Pages int
}

// NearestNeighbours returns, for each fingerprint (or an even sample of
// them when there are more than BruteForcePages), the smallest Hamming
// distance to any other fingerprint of fps. Its histogram shows whether the
// threshold k sits in a valley between duplicates (small distances) and
// distinct pages (around 32 for unrelated texts). With fewer than two
// fingerprints there are no distances. It checks ctx between rows, reads
// fps only, and is safe for concurrent use.
func NearestNeighbours(ctx context.Context, fps []contentseen.Fingerprint) (Neighbours, error) {
	n := len(fps)
	res := Neighbours{Pages: n}
	if n < 2 {
		return res, nil
	}
	if n <= BruteForcePages {
		best := make([]int, n)
		for i := range best {
			best[i] = 65
		}
		for i := 0; i < n; i++ {
			if i%256 == 0 {
				if err := ctx.Err(); err != nil {
					return res, err
				}
			}
			a := uint64(fps[i])
			for j := i + 1; j < n; j++ {
				d := bits.OnesCount64(a ^ uint64(fps[j]))
				if d < best[i] {
					best[i] = d
				}
				if d < best[j] {
					best[j] = d
				}
			}
		}
		res.Distances = best
		return res, nil
	}
	res.Sampled = true
	res.Distances = make([]int, 0, NeighbourSample)
	for s := range NeighbourSample {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		i := s * n / NeighbourSample
		a, best := uint64(fps[i]), 65
		for j, b := range fps {
			if j == i {
				continue
			}
			if d := bits.OnesCount64(a ^ uint64(b)); d < best {
				best = d
			}
		}
		res.Distances = append(res.Distances, best)
	}
	return res, nil
}
