package frontier

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Record keeps in this frontier the outcome of it, a URL that another queue
// handed out and completed (a shared queue of a distributed crawl): done
// with outcome, or failed with outcome as the reason when failed is set,
// so that the data directory lists it as the single-process crawl does
// (ReadFailedItems, ReadDone, ReadStats). It replaces an earlier record of
// the URL (done or failed) and keeps the counts right; a URL this
// frontier itself holds pending or in flight is left alone. Record never
// queues anything.
func (f *Frontier) Record(ctx context.Context, it Item, outcome string, failed bool) error {
	if err := validate(it); err != nil {
		return err
	}
	return f.update(ctx, func(tx *bolt.Tx) error {
		c, err := f.begin(tx)
		if err != nil {
			return err
		}
		key := []byte(it.URL)
		seen := c.top.Bucket(bSeen)
		switch prior := seen.Get(key); {
		case prior == nil:
		case len(prior) > 0 && prior[0] == stDone:
			c.delta.done--
		case len(prior) > 0 && prior[0] == stFailed:
			c.delta.failed--
			if err := c.top.Bucket(bFailed).Delete(key); err != nil {
				return err
			}
			if err := c.top.Bucket(bFailedItem).Delete(key); err != nil {
				return err
			}
		default:
			return nil // pending or in flight here: this frontier completes it
		}
		state := byte(stDone)
		if failed {
			state = stFailed
			c.delta.failed++
			if err := c.top.Bucket(bFailed).Put(key, []byte(outcome)); err != nil {
				return err
			}
			item := it
			item.LastError = outcome
			if err := c.top.Bucket(bFailedItem).Put(key, encodeItem(item)); err != nil {
				return err
			}
		} else {
			c.delta.done++
		}
		if err := seen.Put(key, append([]byte{state}, outcome...)); err != nil {
			return err
		}
		if err := c.finish(); err != nil {
			return fmt.Errorf("frontier: record %q: %w", it.URL, err)
		}
		return nil
	})
}

// Forget deletes the failed records of urls (Record, failed set), so that
// the data directory no longer lists them: a distributed worker calls it
// once the shared queue has queued them again (crawl --retry-failed). A URL
// in another state is left alone.
func (f *Frontier) Forget(ctx context.Context, urls ...string) error {
	return f.update(ctx, func(tx *bolt.Tx) error {
		c, err := f.begin(tx)
		if err != nil {
			return err
		}
		seen := c.top.Bucket(bSeen)
		for _, u := range urls {
			key := []byte(u)
			if v := seen.Get(key); len(v) == 0 || v[0] != stFailed {
				continue
			}
			for _, b := range [][]byte{bSeen, bFailed, bFailedItem} {
				if err := c.top.Bucket(b).Delete(key); err != nil {
					return err
				}
			}
			c.delta.failed--
		}
		if err := c.finish(); err != nil {
			return fmt.Errorf("frontier: forget failed urls: %w", err)
		}
		return nil
	})
}
