package frontier

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Add marks the items' URLs seen and enqueues them in one transaction,
// skipping URLs seen before (pending, in flight, done or failed) and
// repeats within items. URLs must be canonical (see Canonical); Add only
// checks cheaply that each is an absolute http(s) URL with a host and no
// fragment. If any item is invalid nothing is added.
func (f *Frontier) Add(ctx context.Context, items ...Item) (added int, err error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	err = f.db.Update(func(tx *bolt.Tx) error {
		added, err = f.AddTx(tx, items...)
		return err
	})
	if err != nil {
		return 0, err
	}
	return added, nil
}

// AddTx is Add inside the caller's write transaction. Memory-resident
// state changes only if tx commits. If AddTx returns an error the caller
// must roll tx back (return the error from db.Update).
func (f *Frontier) AddTx(tx *bolt.Tx, items ...Item) (int, error) {
	for _, it := range items {
		if err := validate(it); err != nil {
			return 0, err
		}
	}
	c, err := f.begin(tx)
	if err != nil {
		return 0, err
	}
	seen, queue := c.top.Bucket(bSeen), c.top.Bucket(bQueue)
	added := 0
	for _, it := range items {
		key := []byte(it.URL)
		if seen.Get(key) != nil {
			continue
		}
		seq, err := c.top.NextSequence()
		if err != nil {
			return 0, fmt.Errorf("frontier: add: %w", err)
		}
		h := HostKey(it.URL)
		hb, err := queue.CreateBucketIfNotExists([]byte(h))
		if err != nil {
			return 0, fmt.Errorf("frontier: add %q: %w", it.URL, err)
		}
		if err := hb.Put(qkey{uint32(it.Depth), seq}.bytes(), encodeItem(it)); err != nil {
			return 0, fmt.Errorf("frontier: add %q: %w", it.URL, err)
		}
		if err := seen.Put(key, []byte{stPending}); err != nil {
			return 0, fmt.Errorf("frontier: add %q: %w", it.URL, err)
		}
		c.hosts[h] = true
		added++
	}
	if added == 0 {
		return 0, nil
	}
	c.delta.pending = int64(added)
	if err := c.finish(); err != nil {
		return 0, fmt.Errorf("frontier: add: %w", err)
	}
	return added, nil
}

func validate(it Item) error {
	switch {
	case HostKey(it.URL) == "":
		return fmt.Errorf("%w %q: not an absolute http(s) URL with a host", ErrBadURL, clip(it.URL))
	case len(it.URL) > MaxURLLength:
		return fmt.Errorf("%w %q: longer than %d bytes", ErrBadURL, clip(it.URL), MaxURLLength)
	case strings.ContainsAny(it.URL, "# \t\r\n"):
		return fmt.Errorf("%w %q: not canonical (fragment or white space)", ErrBadURL, clip(it.URL))
	case it.Depth < 0 || int64(it.Depth) > math.MaxUint32:
		return fmt.Errorf("%w %q: depth %d out of range", ErrBadURL, clip(it.URL), it.Depth)
	}
	return nil
}

// DoneTx marks it done with outcome (such as "stored", "dropped",
// "skipped:non-html") inside the caller's write transaction; its host slot
// is freed when tx commits. If tx rolls back the URL stays in flight: call
// Done, Retry or Fail for it later, or its slot stays taken until restart.
func (f *Frontier) DoneTx(tx *bolt.Tx, it Item, outcome string) error {
	return f.complete(tx, it, stDone, outcome, 0)
}

// Done is DoneTx in its own transaction.
func (f *Frontier) Done(ctx context.Context, it Item, outcome string) error {
	return f.update(ctx, func(tx *bolt.Tx) error { return f.DoneTx(tx, it, outcome) })
}

// RetryTx puts it back to pending with Attempts+1 and LastError = reason,
// not to be handed out before now+after, and frees its host slot on commit.
// The item's attempts are taken from the stored record, not from it.
func (f *Frontier) RetryTx(tx *bolt.Tx, it Item, after time.Duration, reason string) error {
	return f.complete(tx, it, stPending, reason, after)
}

// Retry is RetryTx in its own transaction.
func (f *Frontier) Retry(ctx context.Context, it Item, after time.Duration, reason string) error {
	return f.update(ctx, func(tx *bolt.Tx) error { return f.RetryTx(tx, it, after, reason) })
}

// FailTx records it as failed with reason (listed by Failed) and frees its
// host slot on commit. A failed URL is never handed out again.
func (f *Frontier) FailTx(tx *bolt.Tx, it Item, reason string) error {
	return f.complete(tx, it, stFailed, reason, 0)
}

// Fail is FailTx in its own transaction.
func (f *Frontier) Fail(ctx context.Context, it Item, reason string) error {
	return f.update(ctx, func(tx *bolt.Tx) error { return f.FailTx(tx, it, reason) })
}

func (f *Frontier) update(ctx context.Context, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return f.db.Update(fn)
}

// complete ends the in-flight state of it: done, failed, or pending again.
func (f *Frontier) complete(tx *bolt.Tx, it Item, state byte, text string, after time.Duration) error {
	c, err := f.begin(tx)
	if err != nil {
		return err
	}
	key := []byte(it.URL)
	inflight := c.top.Bucket(bInflight)
	rec := inflight.Get(key)
	if rec == nil {
		return fmt.Errorf("%w: %q", ErrNotInFlight, clip(it.URL))
	}
	if len(rec) < 12 {
		return fmt.Errorf("%w: in-flight record of %q", errCorrupt, it.URL)
	}
	stored, err := decodeItem(rec[12:])
	if err != nil {
		return err
	}
	if err := inflight.Delete(key); err != nil {
		return err
	}
	seenVal := append([]byte{state}, text...)
	switch state {
	case stDone:
		c.delta.done = 1
	case stFailed:
		c.delta.failed = 1
		if err := c.top.Bucket(bFailed).Put(key, []byte(text)); err != nil {
			return err
		}
		stored.LastError = text
		if err := c.top.Bucket(bFailedItem).Put(key, encodeItem(stored)); err != nil {
			return err
		}
	case stPending:
		c.delta.pending = 1
		seenVal = seenVal[:1]
		stored.Attempts++
		stored.LastError = text
		seq, err := c.top.NextSequence()
		if err != nil {
			return err
		}
		at := f.now().Add(after).UnixNano()
		if err := c.top.Bucket(bRetry).Put(retryKey(at, seq), encodeItem(stored)); err != nil {
			return err
		}
		c.retry = true
	}
	if err := c.top.Bucket(bSeen).Put(key, seenVal); err != nil {
		return err
	}
	c.delta.inflight = -1
	c.freed = append(c.freed, HostKey(it.URL))
	if err := c.finish(); err != nil {
		return fmt.Errorf("frontier: complete %q: %w", it.URL, err)
	}
	return nil
}
