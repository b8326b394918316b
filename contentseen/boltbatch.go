package contentseen

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// batchChunk is how many keys AddBatch writes per transaction: big enough
// to amortise the commit, small enough to keep a transaction's dirty pages
// (held in memory until commit) at tens of megabytes.
const batchChunk = 1 << 18

// AddBatch records many fingerprints, like Add for each pair in order
// (fingerprints already stored or repeated keep their first id), but fast
// enough to load millions: it sorts each bucket's keys and writes them in
// chunks of 256Ki keys per transaction, filling pages completely
// (FillPercent 1.0) where keys are appended past the bucket's last key.
//
// AddBatch is for bulk loading and is not atomic: it writes bucket after
// bucket in several transactions. A "building" marker in the meta bucket
// is set for the duration; if the load is interrupted the marker stays
// and opening the index reports that it must be rebuilt. Concurrent Seen
// calls may miss fingerprints of the batch until AddBatch returns.
func (x *BoltIndex) AddBatch(ctx context.Context, ids []uint64, fps []Fingerprint) error {
	if len(ids) != len(fps) {
		return fmt.Errorf("contentseen: add batch: %d ids for %d fingerprints", len(ids), len(fps))
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return ErrClosed
	}
	err := x.db.View(func(tx *bolt.Tx) error {
		top, err := x.top(tx)
		if err != nil {
			return err
		}
		stored := top.Bucket(idsBucket)
		empty := x.LenTx(tx) == 0
		ids, fps = dedupBatch(ids, fps, func(fp Fingerprint) bool {
			return !empty && stored.Get(be64(uint64(fp))) != nil
		})
		return nil
	})
	if err != nil {
		return fmt.Errorf("contentseen: add batch: %w", err)
	}
	if len(fps) == 0 {
		return nil
	}
	if err := x.update(func(meta *bolt.Bucket) error { return meta.Put(buildingKey, []byte{1}) }); err != nil {
		return err
	}
	// dedupBatch returns the pairs sorted by fingerprint: ids bucket first.
	pairs := make([]kv, len(fps))
	for i, fp := range fps {
		pairs[i] = kv{uint64(fp), ids[i]}
	}
	if err := x.putSorted(ctx, idsBucket, pairs, true); err != nil {
		return err
	}
	for i, fp := range fps {
		pairs[i] = kv{ids[i], uint64(fp)}
	}
	sortKV(pairs)
	if err := x.putSorted(ctx, fpsBucket, pairs, true); err != nil {
		return err
	}
	for t, name := range x.tabNames {
		for i, fp := range fps {
			pairs[i] = kv{key: x.layout.Permute(t, fp)}
		}
		sortKV(pairs)
		if err := x.putSorted(ctx, name, pairs, false); err != nil {
			return err
		}
	}
	return x.update(func(meta *bolt.Bucket) error {
		if err := addCount(meta, len(fps)); err != nil {
			return err
		}
		return meta.Delete(buildingKey)
	})
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

// putSorted writes pairs sorted by key into bucket name, chunk by chunk.
// withValue false writes empty values (the tables).
func (x *BoltIndex) putSorted(ctx context.Context, name []byte, pairs []kv, withValue bool) error {
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
			b := top.Bucket(name)
			keys := make([]byte, 8*len(chunk)) // bbolt keeps keys until commit
			var vals []byte
			if withValue {
				vals = make([]byte, 8*len(chunk))
			}
			for i, p := range chunk {
				binary.BigEndian.PutUint64(keys[8*i:], p.key)
				if withValue {
					binary.BigEndian.PutUint64(vals[8*i:], p.id)
				}
			}
			// Appending past the last key: fill pages completely.
			if last, _ := b.Cursor().Last(); last == nil || bytes.Compare(last, keys[:8]) < 0 {
				b.FillPercent = 1.0
			}
			for i := range chunk {
				v := []byte{}
				if withValue {
					v = vals[8*i : 8*i+8 : 8*i+8]
				}
				if err := b.Put(keys[8*i:8*i+8:8*i+8], v); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("contentseen: add batch to %q: %w", name, err)
		}
	}
	return nil
}
