package main

import (
	"context"
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
// are not stored; a page of this crawl near one of them (odds about 1e-5
// for 10M) would be dropped as a duplicate of a page not in the store.
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
	return errors.Join(err, x.Close(), db.Close())
}
