package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/crawler"
)

// prefillIndex makes opts' data directory hold a crawl whose index has n
// random fingerprints, as an earlier crawl of n pages would have left it
// (ids 1..n): the crawler creates its database and index, then they are
// bulk-loaded in the index's own layout and scheme. The pages themselves
// are not stored, but each has a sketch (prefillSketches): a page of this
// crawl within the candidate radius of one of them (a short page's radius
// of 11 bits holds about 5e-8 of random fingerprints: 0.05 candidates per
// look-up at 1M, 0.5 at 10M) reads and compares its sketch, as the judge
// does for a stored page, and the random sketch never verifies.
func prefillIndex(ctx context.Context, opts crawler.Options, n int) error {
	c, err := crawler.Open(opts)
	if err != nil {
		return err
	}
	if err := c.Close(); err != nil {
		return err
	}
	db, err := bolt.Open(filepath.Join(opts.DataDir, crawler.DBFile), 0o600, nil)
	if err != nil {
		return fmt.Errorf("prefill: %w", err)
	}
	var name, scheme string
	var ok bool
	if err := db.View(func(tx *bolt.Tx) error {
		name, scheme, ok = contentseen.ReadBoltMeta(tx, "")
		return nil
	}); err != nil || !ok {
		return errors.Join(fmt.Errorf("prefill: the crawl's index has no metadata (%v)", err), db.Close())
	}
	layout, err := contentseen.LayoutByName(name)
	if err != nil {
		return errors.Join(fmt.Errorf("prefill: %w", err), db.Close())
	}
	x, err := contentseen.NewBoltIndex(db, contentseen.BoltOptions{Layout: layout, Scheme: scheme})
	if err != nil {
		return errors.Join(fmt.Errorf("prefill: %w", err), db.Close())
	}
	rng := rand.New(rand.NewPCG(uint64(n), 1))
	ids := make([]uint64, n)
	fps := make([]contentseen.Fingerprint, n)
	for i := range n {
		ids[i], fps[i] = uint64(i+1), contentseen.Fingerprint(rng.Uint64())
	}
	err = x.AddBatch(ctx, ids, fps)
	if err == nil {
		err = prefillSketches(db, n)
	}
	return errors.Join(err, x.Close(), db.Close())
}

// The store's buckets (storage.New's layout, bucket "pages"): written
// directly, since the store has no way to hold a sketch without its page.
// Were the layout to change, the crawl would fail on the first candidate
// ("near match N: ... not found") instead of measuring something else.
var (
	storeBucket  = []byte("pages")
	sketchBucket = []byte("sketch")
	metaBucket   = []byte("meta") // its sequence hands out page ids
)

// prefillSketches gives pages 1..n each a random sketch (random bins agree
// with a real text's on 1 bin in 256: a Jaccard estimate near 0) and sets
// the store's id sequence past them, so the crawl's own pages are n+1 on.
func prefillSketches(db *bolt.DB, n int) error {
	rng := rand.New(rand.NewPCG(uint64(n), 2))
	const perTx = 200_000 // keeps a transaction's dirty pages small
	for lo := 1; lo <= n; lo += perTx {
		err := db.Update(func(tx *bolt.Tx) error {
			top := tx.Bucket(storeBucket)
			if top == nil || top.Bucket(sketchBucket) == nil || top.Bucket(metaBucket) == nil {
				return errors.New("the store has no sketch or meta bucket")
			}
			b := top.Bucket(sketchBucket)
			b.FillPercent = 1 // ids ascend: pack the pages full
			var key [8]byte
			for id := lo; id < lo+perTx && id <= n; id++ {
				var sk contentseen.Sketch
				sk.Size = uint32(50 + rng.IntN(1000))
				for i := range sk.Bins {
					sk.Bins[i] = byte(rng.Uint32())
				}
				v, err := sk.MarshalBinary()
				if err != nil {
					return err
				}
				binary.BigEndian.PutUint64(key[:], uint64(id))
				if err := b.Put(key[:], v); err != nil {
					return err
				}
			}
			return top.Bucket(metaBucket).SetSequence(uint64(n))
		})
		if err != nil {
			return fmt.Errorf("prefill sketches: %w", err)
		}
	}
	return nil
}
