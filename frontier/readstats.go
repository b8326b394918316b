package frontier

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// ReadStats returns the persisted counts of the frontier kept in bucket of
// tx's database ("" means "frontier") without opening it, so it works on a
// read-only database (`crawl stats`). URLs left in flight by a stopped crawl
// count as InFlight (a resumed crawl queues them again); Hosts is 0. A
// database without a frontier reads as empty.
func ReadStats(tx *bolt.Tx, bucket string) (Stats, error) {
	meta := readBucket(tx, bucket, bMeta)
	if meta == nil {
		return Stats{}, nil
	}
	c, err := parseCounts(meta.Get(kCounts))
	if err != nil {
		return Stats{}, fmt.Errorf("frontier: read stats: %w", err)
	}
	return Stats{Pending: int(c.pending), InFlight: int(c.inflight), Done: int(c.done), Failed: int(c.failed)}, nil
}

// ReadDone calls fn for every URL the frontier kept in bucket of tx's
// database ("" means "frontier") recorded as done, with its outcome, in
// URL order, without opening it. It reads every URL the crawl has seen.
func ReadDone(tx *bolt.Tx, bucket string, fn func(url, outcome string) error) error {
	seen := readBucket(tx, bucket, bSeen)
	if seen == nil {
		return nil
	}
	return seen.ForEach(func(k, v []byte) error {
		if len(v) == 0 || v[0] != stDone {
			return nil
		}
		return fn(string(k), string(v[1:]))
	})
}

// readBucket returns the sub-bucket name of the frontier kept in bucket of
// tx's database ("" means "frontier"), or nil when there is none: the
// Read functions work on a database the frontier was never opened on.
func readBucket(tx *bolt.Tx, bucket string, name []byte) *bolt.Bucket {
	if bucket == "" {
		bucket = "frontier"
	}
	top := tx.Bucket([]byte(bucket))
	if top == nil {
		return nil
	}
	return top.Bucket(name)
}
