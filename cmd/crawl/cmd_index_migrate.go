package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/crawler"
)

// `crawl index migrate`: rebuild a data directory's own index with another
// layout, offline, crash-safely. The index lives in crawl.db under the
// top-level bucket "contentseen". The new one is built beside it, in
// migrateBucket, from the old one's (id, fingerprint) records; then one
// transaction deletes the old index and moves the new one's contents under
// "contentseen" (bbolt moves a sub-bucket by relinking its root page, so
// this costs a few pages plus freeing the old index's). Until that
// transaction commits, the old index is untouched and every command and
// the next crawl use it; a leftover migrateBucket from an interrupted run
// is only space, removed by the next migrate. Everything that reads the
// index finds it where it always was, so no pointer to "the current
// bucket" is needed.

const (
	indexBucket   = "contentseen" // the crawler's index (BoltOptions.Bucket default)
	migrateBucket = "contentseen.migrate"
)

// migrateHooks let tests interrupt a migration at its one critical point.
type migrateHooks struct {
	beforeSwap func() error // called after the new index is built, before the swap
}

func (m *Main) runIndexMigrate(ctx context.Context, args []string) error {
	fset := m.indexFlagSet("migrate", "--data DIR --layout NAME",
		"rebuild the data directory's index with another layout, from the fingerprints it holds;\n"+
			"an index in an older storage format is rebuilt even into the same layout\n"+
			"(offline: refused while a crawl runs; an interrupted migration leaves the old index in use)")
	layoutName := fset.String("layout", "", "the new layout: 4x16, 10x28, google16, k<k>/<widths>/lead<n>, or auto\n"+
		"(chosen for contentseen.k and the larger of contentseen.expected_pages and the pages stored)")
	var cf configFlags
	m.addConfigFlags(fset, &cf)
	if err := fset.Parse(args); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		return usageErrorf(fset, "index migrate: unexpected argument %q", fset.Arg(0))
	}
	if *layoutName == "" {
		return usageErrorf(fset, "index migrate: --layout NAME is required")
	}
	if *layoutName != crawler.LayoutAuto {
		if _, err := contentseen.LayoutByName(*layoutName); err != nil {
			return usageErrorf(fset, "index migrate: --layout: %v", err)
		}
	}
	cfg, err := cf.load()
	if err != nil {
		return err
	}
	res, err := migrateIndex(ctx, cfg.Data, *layoutName, cfg.ContentSeen.K, cfg.ContentSeen.ExpectedPages, migrateHooks{})
	if err != nil {
		return fmt.Errorf("index migrate: %w", err)
	}
	if res.from == res.to {
		fmt.Fprintf(m.Stderr, "the index in %s already has layout %s: nothing to do\n", cfg.Data, res.to)
		return nil
	}
	fmt.Fprintf(m.Stderr, "migrated %d fingerprint%s in %s from layout %s to %s in %v\n",
		res.n, plural(res.n), cfg.Data, res.from, res.to, res.took.Round(time.Millisecond))
	switch cfg.ContentSeen.Layout {
	case res.to, crawler.LayoutAuto:
		fmt.Fprintf(m.Stderr, "the configured contentseen.layout (%s) opens it: the next crawl needs no change\n", cfg.ContentSeen.Layout)
	default:
		fmt.Fprintf(m.Stderr, "the next crawl needs --set contentseen.layout=%s (or auto); the configuration says %s\n", res.to, cfg.ContentSeen.Layout)
	}
	return nil
}

type migrateResult struct {
	from, to string
	n        int
	took     time.Duration
}

// migrateIndex rebuilds the index of data directory dir with the named
// layout ("auto": contentseen.ChooseLayout for k and the larger of expected
// and the fingerprints stored). A layout that cannot find matches within
// k, the crawl's threshold, is refused.
func migrateIndex(ctx context.Context, dir, name string, k int, expected int64, hooks migrateHooks) (res migrateResult, err error) {
	start := time.Now()
	path := filepath.Join(dir, crawler.DBFile)
	if _, err := os.Stat(path); err != nil {
		return res, fmt.Errorf("no crawl data in %s: %w", dir, err)
	}
	// Fsync on every commit (bbolt's default): without it a power cut could
	// reorder writes and damage the old index too.
	// It is checked first: nothing writes to a damaged file.
	db, err := crawler.OpenWritable(dir, time.Second)
	if err != nil {
		return res, err
	}
	defer func() {
		if cerr := db.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("close %s: %w", path, cerr))
		}
	}()

	var scheme string
	var ok bool
	if err := db.View(func(tx *bolt.Tx) error {
		res.from, scheme, ok = contentseen.ReadBoltMeta(tx, indexBucket)
		return nil
	}); err != nil {
		return res, err
	}
	if !ok {
		return res, fmt.Errorf("%s holds no index (no crawl has run there)", dir)
	}
	oldLayout, err := contentseen.LayoutByName(res.from)
	if err != nil {
		return res, err
	}
	// An index in an older storage format is read from its id records,
	// which every format since 2 keeps alike, and rebuilt even into the
	// same layout: one this version refuses (format 2) is not opened, one
	// it reads (format 3) is, to count its fingerprints.
	var format string
	var current bool
	if err := db.View(func(tx *bolt.Tx) error {
		format, current = contentseen.BoltFormatTx(tx, indexBucket)
		return nil
	}); err != nil {
		return res, err
	}
	if format == "1" {
		return res, fmt.Errorf("the index in %s has storage format 1, which kept no id records: recrawl into a new data directory", dir)
	}
	count := -1
	if current {
		old, err := contentseen.NewBoltIndex(db, contentseen.BoltOptions{Layout: oldLayout, Scheme: scheme, Bucket: indexBucket})
		if err != nil {
			return res, err
		}
		err = db.View(func(tx *bolt.Tx) error { count = old.LenTx(tx); return nil })
		if cerr := old.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return res, err
		}
	}
	var ids []uint64
	var fps []contentseen.Fingerprint
	err = db.View(func(tx *bolt.Tx) error {
		ids, fps = make([]uint64, 0, max(count, 0)), make([]contentseen.Fingerprint, 0, max(count, 0))
		return contentseen.ScanBoltTx(tx, indexBucket, func(id uint64, fp contentseen.Fingerprint) error {
			ids, fps = append(ids, id), append(fps, fp)
			return nil
		})
	})
	if err != nil {
		return res, fmt.Errorf("read the index: %w", err)
	}
	if count < 0 {
		count = len(fps)
	}

	layout, err := contentseen.LayoutByName(name)
	if name == crawler.LayoutAuto {
		layout, err = contentseen.ChooseLayout(k, max(expected, int64(count)))
	}
	if err != nil {
		return res, err
	}
	if layout.MaxK() < k {
		return res, fmt.Errorf("layout %s answers k <= %d, the crawl's contentseen.k is %d", layout.Name(), layout.MaxK(), k)
	}
	res.to = layout.Name()
	if res.to == res.from && format == contentseen.BoltFormat {
		return res, nil
	}

	// A bucket left by an interrupted migration is stale: start afresh.
	if err := db.Update(func(tx *bolt.Tx) error { return deleteBucketIfExists(tx, []byte(migrateBucket)) }); err != nil {
		return res, err
	}
	x, err := contentseen.NewBoltIndex(db, contentseen.BoltOptions{Layout: layout, Scheme: scheme, Bucket: migrateBucket})
	if err != nil {
		return res, err
	}
	err = x.AddBatch(ctx, ids, fps)
	if err == nil {
		// Every fingerprint the old index counted must have come back:
		// one missing from the id records would be lost for good.
		if n := x.Len(); n != count {
			err = fmt.Errorf("the new index holds %d fingerprints, the old one %d: not migrated", n, count)
		}
	}
	if cerr := x.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return res, err
	}
	if hooks.beforeSwap != nil {
		if err := hooks.beforeSwap(); err != nil {
			return res, err
		}
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		return renameBucket(tx, []byte(migrateBucket), []byte(indexBucket))
	}); err != nil {
		return res, fmt.Errorf("switch to the new index: %w", err)
	}
	res.n, res.took = count, time.Since(start)
	return res, nil
}

// renameBucket replaces the top-level bucket to with from, in tx: to is
// deleted, then every sub-bucket of from is moved (not copied) into a new
// to and every plain key copied, with from's sequence.
func renameBucket(tx *bolt.Tx, from, to []byte) error {
	src := tx.Bucket(from)
	if src == nil {
		return fmt.Errorf("bucket %q missing", from)
	}
	if err := deleteBucketIfExists(tx, to); err != nil {
		return err
	}
	dst, err := tx.CreateBucket(to)
	if err != nil {
		return fmt.Errorf("create bucket %q: %w", to, err)
	}
	// Collect first: moving while a cursor walks the bucket is unsafe.
	var subs, keys, vals [][]byte
	c := src.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v == nil {
			subs = append(subs, bytes.Clone(k))
		} else {
			keys, vals = append(keys, bytes.Clone(k)), append(vals, bytes.Clone(v))
		}
	}
	for _, k := range subs {
		if err := src.MoveBucket(k, dst); err != nil {
			return fmt.Errorf("move bucket %q/%q: %w", from, k, err)
		}
	}
	for i, k := range keys {
		if err := dst.Put(k, vals[i]); err != nil {
			return fmt.Errorf("copy %q/%q: %w", from, k, err)
		}
	}
	if err := dst.SetSequence(src.Sequence()); err != nil {
		return err
	}
	return deleteBucketIfExists(tx, from)
}

func deleteBucketIfExists(tx *bolt.Tx, name []byte) error {
	if err := tx.DeleteBucket(name); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
		return fmt.Errorf("delete bucket %q: %w", name, err)
	}
	return nil
}
