package crawler

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/internal/demosite"
	"github.com/simcrawl/simcrawl/storage"
)

// BenchmarkDedupStoredSide gives the figures behind the choice, in
// dedup_decide.go, of how a batch meets the stored pages: NearTx per batch
// record (ns/op per look-up) against streaming the stored fingerprints
// through the batch's tables, which costs reading them (PageHeaders or
// FingerprintTx per stored page) plus a Probe each (ns/op per stored
// page). Data directories of n text pages are built first.
func BenchmarkDedupStoredSide(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		dir := b.TempDir()
		c, err := Open(Options{DataDir: dir, K: 3})
		if err != nil {
			b.Fatal(err)
		}
		recs := make([]*Record, n)
		for i := range recs {
			recs[i] = &Record{URL: fmt.Sprintf("http://s.example/%d", i), Text: strings.Join(demosite.Words(uint64(i), 40), " ")}
		}
		if _, err := c.DedupWith(context.Background(), &sliceSource{recs: recs}, nil, DedupOptions{Batch: DefaultDedupBatch}); err != nil {
			b.Fatal(err)
		}
		var ids []uint64
		var stored []contentseen.Fingerprint
		err = c.store.PageHeaders(context.Background(), func(p *storage.Page) error {
			ids, stored = append(ids, p.ID), append(stored, contentseen.Fingerprint(p.Fingerprint))
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 1))
		b.Run(fmt.Sprintf("n=%.0e/NearTx", float64(n)), func(b *testing.B) {
			err := c.db.View(func(tx *bolt.Tx) error {
				for b.Loop() {
					if _, err := c.index.NearTx(tx, contentseen.Fingerprint(r.Uint64()), c.k); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		})
		b.Run(fmt.Sprintf("n=%.0e/PageHeaders", float64(n)), func(b *testing.B) {
			// One op is one page: whole scans until b.N pages are read.
			read := 0
			for read < b.N {
				err := c.store.PageHeaders(context.Background(), func(p *storage.Page) error {
					read++
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("n=%.0e/FingerprintTx", float64(n)), func(b *testing.B) {
			err := c.db.View(func(tx *bolt.Tx) error {
				i := 0
				for b.Loop() {
					if _, _, err := c.index.FingerprintTx(tx, ids[i%len(ids)]); err != nil {
						return err
					}
					i++
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		})
		batch := make([]contentseen.Fingerprint, DefaultDedupBatch)
		bids := make([]uint64, len(batch))
		for i := range batch {
			batch[i], bids[i] = contentseen.Fingerprint(r.Uint64()), uint64(i)
		}
		j, err := contentseen.NewJoiner(c.index.Layout(), c.k, bids, batch)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("n=%.0e/Probe", float64(n)), func(b *testing.B) {
			i := 0
			emit := func(contentseen.Pair) error { return nil }
			for b.Loop() {
				if err := j.Probe(ids[i%len(ids)], stored[i%len(stored)], emit); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		if err := c.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
