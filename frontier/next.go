package frontier

import (
	"context"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Next blocks until a URL may be fetched under the politeness rules, marks
// it in flight (persistently) and returns it. A host is eligible when it has
// fewer than PerHostInFlight URLs in flight and the larger of PerHostDelay
// and its SetHostDelay has passed since its last request start. Among
// eligible hosts Next takes the lowest depth, then the oldest URL, so the
// crawl is breadth-first across hosts as far as politeness allows and FIFO
// within a depth.
//
// Next returns ErrDrained when nothing is pending and nothing is in flight,
// ErrClosed after Close, and ctx.Err() when ctx ends. It never busy-waits:
// it sleeps until the earliest host or retry becomes ready or until Add,
// Done, Retry, Fail, SetHostDelay or Close signals.
//
// Cost: one write transaction per call, plus a scan of the hosts that have
// pending URLs (O(hosts with pending URLs), in memory).
func (f *Frontier) Next(ctx context.Context) (Item, error) {
	resynced, resyncVer := false, uint64(0)
	for {
		if err := ctx.Err(); err != nil {
			return Item{}, err
		}
		f.mu.Lock()
		if f.closed {
			f.mu.Unlock()
			return Item{}, ErrClosed
		}
		now := f.now()
		if f.retry.has && !f.promote && now.UnixNano() >= int64(f.retry.key.seq) {
			f.promote = true
			f.mu.Unlock()
			err := f.db.Update(func(tx *bolt.Tx) error { return f.promoteTx(tx, now) })
			f.mu.Lock()
			f.promote = false
			f.signal()
			f.mu.Unlock()
			if err != nil {
				return Item{}, fmt.Errorf("frontier: next: %w", err)
			}
			continue
		}
		h, wait := f.pick(now)
		if h != nil {
			prev := h.lastStart
			h.inflight++
			f.slots++
			h.lastStart = now
			h.popping = true
			f.popping++
			f.mu.Unlock()

			var it Item
			var ok bool
			err := f.db.Update(func(tx *bolt.Tx) error {
				var err error
				it, ok, err = f.popTx(tx, h.name)
				return err
			})

			f.mu.Lock()
			h.popping = false
			f.popping--
			if err != nil || !ok {
				// Stale summary or failed transaction: the host did not
				// start a request after all.
				h.inflight--
				f.slots--
				h.lastStart = prev
				f.signal()
			}
			f.mu.Unlock()
			if err != nil {
				return Item{}, fmt.Errorf("frontier: next: %w", err)
			}
			if ok {
				return it, nil
			}
			continue
		}
		wake := f.wake
		busy := f.slots > 0 || f.popping > 0 || f.promote
		idle := !busy && f.stats.pending <= 0 && f.stats.inflight <= 0
		stuck := !busy && !idle && len(f.active) == 0 && !f.retry.has
		ver := f.version
		f.mu.Unlock()

		switch {
		case idle:
			drained, err := f.drained()
			if err != nil {
				return Item{}, fmt.Errorf("frontier: next: %w", err)
			}
			if drained {
				return Item{}, ErrDrained
			}
			// A commit handler has not run yet; it will signal.
		case stuck:
			// The counts say something is pending but no summary says
			// where. Either a commit handler is late or memory is wrong;
			// the database decides.
			if resynced && ver == resyncVer {
				// Nothing committed since the resync, and still stuck.
				return Item{}, fmt.Errorf("frontier: next: %w: %d pending in counts but none queued", errCorrupt, f.Stats().Pending)
			}
			if err := f.db.Update(f.resyncTx); err != nil {
				return Item{}, fmt.Errorf("frontier: next: %w", err)
			}
			f.mu.Lock()
			resynced, resyncVer = true, f.version
			f.mu.Unlock()
			continue
		}
		if err := sleep(ctx, wake, wait); err != nil {
			return Item{}, err
		}
	}
}

// sleep waits for wake, ctx, or d (if d > 0).
func sleep(ctx context.Context, wake <-chan struct{}, d time.Duration) error {
	var timeout <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-wake:
	case <-timeout:
	}
	return nil
}

// pick returns the eligible host with the smallest queue head, or nil and
// how long until the earliest host or retry becomes ready (0: wait for a
// signal). f.mu must be held.
func (f *Frontier) pick(now time.Time) (*host, time.Duration) {
	if len(f.hosts) > f.sweepAt {
		f.sweep(now)
	}
	var best *host
	var wait time.Duration
	for _, h := range f.active {
		if h.popping || h.inflight >= f.limit || !h.head.has {
			continue
		}
		if d := h.lastStart.Add(max(f.delay, h.delay)).Sub(now); d > 0 {
			if wait == 0 || d < wait {
				wait = d
			}
			continue
		}
		if best == nil || h.head.key.less(best.head.key) {
			best = h
		}
	}
	if best != nil {
		return best, 0
	}
	if f.retry.has {
		d := time.Duration(int64(f.retry.key.seq) - now.UnixNano())
		d = max(d, time.Millisecond)
		if wait == 0 || d < wait {
			wait = d
		}
	}
	return nil, wait
}

// sweep forgets hosts that have nothing pending or in flight, no
// SetHostDelay, and whose delay has passed, so memory follows the hosts in
// use rather than every host ever seen. f.mu must be held.
func (f *Frontier) sweep(now time.Time) {
	for name, h := range f.hosts {
		if h.inflight == 0 && !h.popping && !h.head.has && h.delay == 0 &&
			!now.Before(h.lastStart.Add(f.delay)) {
			delete(f.hosts, name)
		}
	}
	f.sweepAt = 2*len(f.hosts) + 1024
}

// popTx moves the head of host's queue to in flight. ok is false if the
// queue was empty (the summary was stale); the commit then corrects it.
func (f *Frontier) popTx(tx *bolt.Tx, host string) (it Item, ok bool, err error) {
	c, err := f.begin(tx)
	if err != nil {
		return Item{}, false, err
	}
	c.hosts[host] = true
	queue := c.top.Bucket(bQueue)
	hb := queue.Bucket([]byte(host))
	var k, v []byte
	if hb != nil {
		k, v = hb.Cursor().First()
	}
	if k == nil {
		if hb != nil {
			if err := queue.DeleteBucket([]byte(host)); err != nil {
				return Item{}, false, err
			}
		}
		return Item{}, false, c.finish()
	}
	it, err = decodeItem(v)
	if err != nil {
		return Item{}, false, err
	}
	rec := make([]byte, 0, len(k)+len(v))
	rec = append(append(rec, k...), v...) // copy before Delete invalidates k, v
	if err := hb.Delete(rec[:len(k)]); err != nil {
		return Item{}, false, err
	}
	if k, _ := hb.Cursor().First(); k == nil {
		// Empty host buckets would make New and resync walk dead hosts.
		if err := queue.DeleteBucket([]byte(host)); err != nil {
			return Item{}, false, err
		}
	}
	if err := c.top.Bucket(bInflight).Put([]byte(it.URL), rec); err != nil {
		return Item{}, false, err
	}
	if err := c.top.Bucket(bSeen).Put([]byte(it.URL), []byte{stInflight}); err != nil {
		return Item{}, false, err
	}
	c.delta.pending, c.delta.inflight = -1, 1
	return it, true, c.finish()
}

// promoteTx moves retries that are due at now into their host queues,
// keeping their depth so breadth-first order still holds.
func (f *Frontier) promoteTx(tx *bolt.Tx, now time.Time) error {
	c, err := f.begin(tx)
	if err != nil {
		return err
	}
	c.retry = true
	retry, queue := c.top.Bucket(bRetry), c.top.Bucket(bQueue)
	var due [][]byte
	cur := retry.Cursor()
	for k, v := cur.First(); k != nil && int64(beUint64(k)) <= now.UnixNano(); k, v = cur.Next() {
		it, err := decodeItem(v)
		if err != nil {
			return err
		}
		seq, err := c.top.NextSequence()
		if err != nil {
			return err
		}
		h := HostKey(it.URL)
		hb, err := queue.CreateBucketIfNotExists([]byte(h))
		if err != nil {
			return err
		}
		if err := hb.Put(qkey{uint32(it.Depth), seq}.bytes(), v); err != nil {
			return err
		}
		c.hosts[h] = true
		due = append(due, append([]byte(nil), k...))
	}
	for _, k := range due {
		if err := retry.Delete(k); err != nil {
			return err
		}
	}
	return c.finish()
}

// drained reports whether the database holds nothing pending or in flight.
// Memory can briefly say so while a commit handler has yet to run.
func (f *Frontier) drained() (bool, error) {
	var c counts
	err := f.db.View(func(tx *bolt.Tx) error {
		var err error
		c, err = parseCounts(tx.Bucket(f.top).Bucket(bMeta).Get(kCounts))
		return err
	})
	return c.pending == 0 && c.inflight == 0, err
}
