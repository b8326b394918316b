package frontier

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// ReadQueued returns, per host (HostKey), how many URLs the frontier kept
// in bucket of tx's database ("" means "frontier") still has to fetch:
// queued, waiting for a retry, or left in flight by a stopped crawl (a
// resumed crawl queues them again). Like ReadStats it works on a read-only
// database; it reads every queued item's key and every retry's item, so it
// costs the size of the queue, not of the crawl.
func ReadQueued(tx *bolt.Tx, bucket string) (map[string]int, error) {
	out := map[string]int{}
	if q := readBucket(tx, bucket, bQueue); q != nil {
		err := q.ForEachBucket(func(host []byte) error {
			n := 0
			c := q.Bucket(host).Cursor()
			for k, _ := c.First(); k != nil; k, _ = c.Next() {
				n++
			}
			if n > 0 {
				out[string(host)] += n
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if r := readBucket(tx, bucket, bRetry); r != nil {
		if err := r.ForEach(func(_, v []byte) error {
			it, err := decodeItem(v)
			if err != nil {
				return fmt.Errorf("frontier: read retries: %w", err)
			}
			out[HostKey(it.URL)]++
			return nil
		}); err != nil {
			return nil, err
		}
	}
	if in := readBucket(tx, bucket, bInflight); in != nil {
		if err := in.ForEach(func(url, _ []byte) error {
			out[HostKey(string(url))]++
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ReadFailedItems calls fn, in URL order, with the item of every URL the
// frontier kept in bucket of tx's database gave up on: its depth, source,
// attempts and last error (the reason ReadFailed gives). A URL failed by a
// version that kept only the reason comes with Attempts 0.
func ReadFailedItems(tx *bolt.Tx, bucket string, fn func(Item) error) error {
	failed := readBucket(tx, bucket, bFailed)
	if failed == nil {
		return nil
	}
	items := readBucket(tx, bucket, bFailedItem)
	return failed.ForEach(func(k, v []byte) error {
		it := Item{URL: string(k), LastError: string(v)}
		if items != nil {
			if rec := items.Get(k); rec != nil {
				stored, err := decodeItem(rec)
				if err != nil {
					return fmt.Errorf("frontier: read failed %q: %w", clip(string(k)), err)
				}
				it = stored
				it.URL, it.LastError = string(k), string(v)
			}
		}
		return fn(it)
	})
}
