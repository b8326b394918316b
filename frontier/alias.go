package frontier

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// AliasTx records url, a canonical URL reached without being queued (the
// target of a redirect), as done with outcome, so that it is never queued
// or fetched later. It returns seen=true, and changes nothing, if url was
// already known in any state (pending, in flight, done or failed): the
// caller then knows the page it fetched is an alias of a URL the crawl
// fetches or fetched on its own. Memory-resident state changes only if tx
// commits.
func (f *Frontier) AliasTx(tx *bolt.Tx, url, outcome string) (seen bool, err error) {
	if err := validate(Item{URL: url}); err != nil {
		return false, err
	}
	c, err := f.begin(tx)
	if err != nil {
		return false, err
	}
	seenB := c.top.Bucket(bSeen)
	if seenB.Get([]byte(url)) != nil {
		return true, nil
	}
	if err := seenB.Put([]byte(url), append([]byte{stDone}, outcome...)); err != nil {
		return false, fmt.Errorf("frontier: alias %q: %w", clip(url), err)
	}
	c.delta.done = 1
	if err := c.finish(); err != nil {
		return false, fmt.Errorf("frontier: alias %q: %w", clip(url), err)
	}
	return false, nil
}
