package contentseen

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// batchChunk is how many entries AddBatch writes per transaction: big
// enough to amortise the commit, small enough to keep a transaction's dirty
// pages (held in memory until commit) at a few megabytes.
const batchChunk = 1 << 18

// AddBatch records many fingerprints, like Add for each pair in order
// (fingerprints already stored or repeated keep their first id), but fast
// enough to load millions: it sorts each table's entries and merges them
// into the table's blocks in chunks of 256Ki entries per transaction,
// filling blocks up to their size limit and bbolt's pages completely
// (FillPercent 1.0: the keys arrive in order).
//
// AddBatch is for bulk loading and is not atomic: it writes table after
// table in several transactions. A "building" marker in the meta bucket
// is set for the duration; if the load is interrupted the marker stays
// and opening the index reports that it must be rebuilt. Concurrent Seen
// calls may miss fingerprints of the batch until AddBatch returns.
func (x *BoltIndex) AddBatch(ctx context.Context, ids []uint64, fps []Fingerprint) error {
	if len(ids) != len(fps) {
		return fmt.Errorf("contentseen: add batch: %d ids for %d fingerprints", len(ids), len(fps))
	}
	if x.readOnly {
		return fmt.Errorf("contentseen: add batch: %w", errReadOnly)
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return ErrClosed
	}
	var empty bool
	err := x.db.View(func(tx *bolt.Tx) error {
		top, err := x.top(tx)
		if err != nil {
			return err
		}
		empty = x.LenTx(tx) == 0
		var lerr error
		ids, fps = dedupBatch(ids, fps, func(fp Fingerprint) bool {
			if empty || lerr != nil {
				return false
			}
			ms, err := x.near(tx, top, fp, 0)
			lerr = err
			return len(ms) > 0
		})
		return lerr
	})
	if err != nil {
		return fmt.Errorf("contentseen: add batch: %w", err)
	}
	if len(fps) == 0 {
		return nil
	}
	x.beginBatch()
	if err := x.addBatch(ctx, ids, fps, empty); err != nil {
		return errors.Join(err, x.endBatch(context.WithoutCancel(ctx)))
	}
	// The batch is in the blocks: a cancel now must not turn that into an
	// error, so the tables in memory are rebuilt whatever ctx says.
	return x.endBatch(context.WithoutCancel(ctx))
}

// addBatch writes the deduplicated batch into the blocks.
func (x *BoltIndex) addBatch(ctx context.Context, ids []uint64, fps []Fingerprint, empty bool) error {
	if err := x.update(func(meta *bolt.Bucket) error { return meta.Put(buildingKey, []byte{1}) }); err != nil {
		return err
	}
	pairs := make([]kv, len(fps))
	for i, fp := range fps {
		pairs[i] = kv{ids[i], uint64(fp)}
	}
	sortKV(pairs)
	if err := x.putFingerprints(ctx, pairs); err != nil {
		return err
	}
	pairs = nil
	es := make([]entry, len(fps))
	var sc runScratch
	for t := range x.layout.Tables() {
		for i, fp := range fps {
			es[i] = entry{x.layout.Permute(t, fp), ids[i]}
		}
		slices.SortFunc(es, func(a, b entry) int { return cmp.Compare(a.p, b.p) })
		if empty {
			if err := x.codeFromRun(t, es); err != nil {
				return err
			}
		}
		var hist [hSymbols]uint64
		for start := 0; start < len(es); start += batchChunk {
			if err := ctx.Err(); err != nil {
				return err
			}
			chunk := es[start:min(start+batchChunk, len(es))]
			err := x.db.Update(func(tx *bolt.Tx) error {
				top, err := x.top(tx)
				if err != nil {
					return err
				}
				tables := top.Bucket(tablesBucket)
				tables.FillPercent = 1.0 // blocks are written in key order
				_, err = x.mergeTable(tables, t, chunk, 0, &hist, nil, &sc)
				return err
			})
			if err != nil {
				return fmt.Errorf("contentseen: add batch to table %d: %w", t, err)
			}
		}
	}
	return x.update(func(meta *bolt.Bucket) error {
		if err := addCount(meta, len(fps)); err != nil {
			return err
		}
		return meta.Delete(buildingKey)
	})
}

// codeFromRun records, for table t, a new code built from the symbols of
// es, a sorted run about to fill the empty table, if it beats the current
// one.
func (x *BoltIndex) codeFromRun(t int, es []entry) error {
	var hist [hSymbols]uint64
	for i := 1; i < len(es); i++ {
		sym, _ := symbolOf(uint(bits.LeadingZeros64(es[i-1].p^es[i].p)), es[i].p)
		hist[sym]++
	}
	_, cur := x.codes.latest(t)
	nc, ok := cur.worthReplacing(&hist)
	if !ok {
		return nil
	}
	err := x.db.Update(func(tx *bolt.Tx) error {
		top, err := x.top(tx)
		if err != nil {
			return err
		}
		return x.codes.add(tx, top.Bucket(codesBucket), t, nc)
	})
	if err != nil {
		return fmt.Errorf("contentseen: add batch: %w", err)
	}
	return nil
}

// update runs f on the meta bucket in its own write transaction.
func (x *BoltIndex) update(f func(meta *bolt.Bucket) error) error {
	err := x.db.Update(func(tx *bolt.Tx) error {
		top, err := x.top(tx)
		if err != nil {
			return err
		}
		return f(top.Bucket(metaBucket))
	})
	if err != nil {
		return fmt.Errorf("contentseen: add batch: %w", err)
	}
	return nil
}

// putFingerprints writes (id, fingerprint) pairs sorted by id into the fps
// bucket, chunk by chunk.
func (x *BoltIndex) putFingerprints(ctx context.Context, pairs []kv) error {
	for start := 0; start < len(pairs); start += batchChunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		chunk := pairs[start:min(start+batchChunk, len(pairs))]
		err := x.db.Update(func(tx *bolt.Tx) error {
			top, err := x.top(tx)
			if err != nil {
				return err
			}
			b := top.Bucket(fpsBucket)
			buf := make([]byte, 16*len(chunk)) // bbolt keeps keys and values until commit
			for i, p := range chunk {
				binary.BigEndian.PutUint64(buf[16*i:], p.key)
				binary.BigEndian.PutUint64(buf[16*i+8:], p.id)
			}
			// Appending past the last key: fill pages completely.
			if last, _ := b.Cursor().Last(); last == nil || bytes.Compare(last, buf[:8]) < 0 {
				b.FillPercent = 1.0
			}
			for i := range chunk {
				if err := b.Put(buf[16*i:16*i+8:16*i+8], buf[16*i+8:16*i+16:16*i+16]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("contentseen: add batch to %q: %w", fpsBucket, err)
		}
	}
	return nil
}
