package frontier

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// RetryFailed queues every failed URL again, at its old depth and with its
// attempt count reset, and returns how many. A crawl calls it when the user
// asks for another try (`crawl --retry-failed`): a site that was down, or
// whose robots.txt answered 5xx, is then fetched again. URLs failed before
// their item was kept (older data directories) are queued at depth 0.
func (f *Frontier) RetryFailed(ctx context.Context) (n int, err error) {
	err = f.update(ctx, func(tx *bolt.Tx) error {
		n, err = f.retryFailedTx(tx)
		return err
	})
	return n, err
}

func (f *Frontier) retryFailedTx(tx *bolt.Tx) (int, error) {
	c, err := f.begin(tx)
	if err != nil {
		return 0, err
	}
	failed, items := c.top.Bucket(bFailed), c.top.Bucket(bFailedItem)
	seen, queue := c.top.Bucket(bSeen), c.top.Bucket(bQueue)
	var urls [][]byte
	if err := failed.ForEach(func(k, _ []byte) error {
		urls = append(urls, append([]byte(nil), k...))
		return nil
	}); err != nil {
		return 0, err
	}
	for _, k := range urls {
		it := Item{URL: string(k)}
		if v := items.Get(k); v != nil {
			if it, err = decodeItem(v); err != nil {
				return 0, err
			}
		}
		it.Attempts, it.LastError = 0, ""
		seq, err := c.top.NextSequence()
		if err != nil {
			return 0, err
		}
		h := HostKey(it.URL)
		hb, err := queue.CreateBucketIfNotExists([]byte(h))
		if err != nil {
			return 0, err
		}
		if err := hb.Put(qkey{uint32(it.Depth), seq}.bytes(), encodeItem(it)); err != nil {
			return 0, err
		}
		if err := seen.Put(k, []byte{stPending}); err != nil {
			return 0, err
		}
		if err := failed.Delete(k); err != nil {
			return 0, err
		}
		if err := items.Delete(k); err != nil {
			return 0, err
		}
		c.hosts[h] = true
	}
	if len(urls) == 0 {
		return 0, nil
	}
	c.delta.failed = -int64(len(urls))
	c.delta.pending = int64(len(urls))
	if err := c.finish(); err != nil {
		return 0, fmt.Errorf("frontier: retry failed: %w", err)
	}
	return len(urls), nil
}

// ReadFailed calls fn for every failed URL with its reason, in URL order,
// from the frontier kept in bucket of tx's database ("" means "frontier")
// without opening it, so it works on a read-only database (`crawl stats
// --failed`): ReadFailedItems without the items.
func ReadFailed(tx *bolt.Tx, bucket string, fn func(url, reason string) error) error {
	return ReadFailedItems(tx, bucket, func(it Item) error { return fn(it.URL, it.LastError) })
}
