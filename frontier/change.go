package frontier

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// change collects what one method call did inside a write transaction. Its
// finish method persists the counts and registers a commit handler that
// brings the memory-resident summaries up to date; if the transaction rolls
// back, memory is untouched.
type change struct {
	f     *Frontier
	tx    *bolt.Tx
	top   *bolt.Bucket
	delta counts
	hosts map[string]bool // hosts whose queue head must be re-read
	freed []string        // hosts with one in-flight slot fewer
	retry bool            // retry head must be re-read
}

func (f *Frontier) begin(tx *bolt.Tx) (*change, error) {
	if tx == nil || !tx.Writable() {
		return nil, fmt.Errorf("frontier: need a writable transaction")
	}
	top := tx.Bucket(f.top)
	if top == nil {
		return nil, fmt.Errorf("frontier: bucket %q missing (database not opened with New?)", f.top)
	}
	return &change{f: f, tx: tx, top: top, hosts: make(map[string]bool)}, nil
}

// finish persists the counts and takes snapshots for the commit handler.
func (c *change) finish() error {
	meta := c.top.Bucket(bMeta)
	n, err := parseCounts(meta.Get(kCounts))
	if err != nil {
		return err
	}
	n.add(c.delta)
	if err := meta.Put(kCounts, n.bytes()); err != nil {
		return err
	}
	heads := make(map[string]headHint, len(c.hosts))
	queue := c.top.Bucket(bQueue)
	for name := range c.hosts {
		var hint headHint
		if hb := queue.Bucket([]byte(name)); hb != nil {
			if k, _ := hb.Cursor().First(); k != nil {
				q, err := parseQkey(k)
				if err != nil {
					return err
				}
				hint = headHint{has: true, key: q}
			}
		}
		heads[name] = hint
	}
	var retry headHint
	if c.retry {
		if k, _ := c.top.Bucket(bRetry).Cursor().First(); k != nil {
			retry = headHint{has: true, key: qkey{seq: beUint64(k)}}
		}
	}
	f := c.f
	// Drawn while bbolt's writer lock is held, so versions follow commit
	// order. Lock order is always "bbolt writer, then f.mu", never reverse.
	f.mu.Lock()
	f.version++
	v := f.version
	f.mu.Unlock()
	freed := c.freed
	c.tx.OnCommit(func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if v > f.statsVer {
			f.stats, f.statsVer = n, v
		}
		for name, hint := range heads {
			hint.ver = v
			f.setHead(f.host(name), hint)
		}
		if c.retry && v > f.retry.ver {
			retry.ver = v
			f.retry = retry
		}
		for _, name := range freed {
			if h := f.hosts[name]; h != nil && h.inflight > 0 {
				h.inflight--
				f.slots--
			}
		}
		f.signal()
	})
	return nil
}

func beUint64(b []byte) uint64 {
	if len(b) < 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}
