package frontier

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

var (
	// ErrDrained is returned by Next when nothing is pending and nothing is
	// in flight: the crawl is complete.
	ErrDrained = errors.New("frontier: drained")
	// ErrClosed is returned by Next after Close.
	ErrClosed = errors.New("frontier: closed")
	// ErrNotInFlight is returned by Done, Retry and Fail (and their Tx
	// forms) for a URL that Next has not handed out, or that was already
	// completed.
	ErrNotInFlight = errors.New("frontier: not in flight")
)

// Item is one URL in the frontier. The zero Attempts and LastError are right
// for a new URL.
type Item struct {
	URL       string // canonical (see Canonical)
	Depth     int    // 0 for seeds
	Source    string // URL of the page that linked it, "" for seeds
	Attempts  int    // failed attempts so far (Retry increments it)
	Seed      bool
	LastError string // reason given to the last Retry, "" before any
}

// Options configure a Frontier. The zero value gives the defaults.
type Options struct {
	PerHostInFlight int              // requests in flight per host; default 2
	PerHostDelay    time.Duration    // minimum gap between request starts to one host; default 1s; negative means 0
	Bucket          string           // top-level bucket name; default "frontier"
	Now             func() time.Time // clock for politeness and retries; default time.Now (tests inject one)
}

// Stats are counts as of the last committed change the frontier has seen.
type Stats struct {
	Pending  int // queued or waiting for a retry
	InFlight int // handed out by Next, not yet Done, Retried or Failed
	Done     int
	Failed   int
	Hosts    int // hosts with pending URLs (memory-resident summaries)
}

// Frontier is a persistent, polite, breadth-first URL queue with a URL-seen
// set, stored in a bbolt database it shares with its caller. It is safe for
// concurrent use. It starts no goroutines.
type Frontier struct {
	db    *bolt.DB
	top   []byte
	limit int
	delay time.Duration
	now   func() time.Time

	mu       sync.Mutex // guards every field below
	hosts    map[string]*host
	active   []*host // hosts whose summary says they have pending URLs; a slice because Next scans it
	sweepAt  int     // sweep idle hosts when len(hosts) exceeds this
	stats    counts  // persisted counts of the newest applied commit
	statsVer uint64
	retry    headHint // earliest retry time (qkey.seq holds unix ns)
	version  uint64   // drawn inside write transactions, so it follows commit order
	slots    int      // sum of host.inflight
	popping  int      // Next calls between reserving a host and committing
	promote  bool     // a Next is moving due retries into host queues
	wake     chan struct{}
	closed   bool
}

// host is the memory-resident summary of one politeness unit.
type host struct {
	name      string
	inflight  int           // reserved or handed out, not yet completed
	lastStart time.Time     // start of the newest request
	delay     time.Duration // SetHostDelay
	head      headHint      // first key of the host queue
	activeAt  int           // index in Frontier.active, -1 if not there
	popping   bool          // a Next is taking this host's head
}

// headHint is a snapshot of a queue head taken inside a write transaction.
// ver orders snapshots: commit handlers may run out of order (bbolt runs
// them after releasing its writer lock), so an older snapshot never
// overwrites a newer one.
type headHint struct {
	has bool
	key qkey
	ver uint64
}

// New opens the frontier stored in db under o.Bucket, creating its buckets.
// URLs left in flight by a crash or a stop go back to pending where they
// were, so a resumed crawl fetches at most those again. Loading reads one
// key per host with pending URLs.
func New(db *bolt.DB, o Options) (*Frontier, error) {
	if o.PerHostInFlight <= 0 {
		o.PerHostInFlight = 2
	}
	if o.PerHostDelay == 0 {
		o.PerHostDelay = time.Second
	} else if o.PerHostDelay < 0 {
		o.PerHostDelay = 0
	}
	if o.Bucket == "" {
		o.Bucket = "frontier"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	f := &Frontier{
		db:      db,
		top:     []byte(o.Bucket),
		limit:   o.PerHostInFlight,
		delay:   o.PerHostDelay,
		now:     o.Now,
		hosts:   make(map[string]*host),
		sweepAt: 1024,
		wake:    make(chan struct{}),
	}
	err := db.Update(func(tx *bolt.Tx) error {
		top, err := tx.CreateBucketIfNotExists(f.top)
		if err != nil {
			return err
		}
		for _, name := range [][]byte{bSeen, bQueue, bRetry, bInflight, bFailed, bFailedItem, bMeta} {
			if _, err := top.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		if err := f.requeueInflight(top); err != nil {
			return err
		}
		return f.resyncTx(tx)
	})
	if err != nil {
		return nil, fmt.Errorf("frontier: open bucket %q: %w", o.Bucket, err)
	}
	return f, nil
}

// requeueInflight puts every in-flight URL back at its old queue position.
func (f *Frontier) requeueInflight(top *bolt.Bucket) error {
	inflight, seen, queue := top.Bucket(bInflight), top.Bucket(bSeen), top.Bucket(bQueue)
	var urls [][]byte
	err := inflight.ForEach(func(k, v []byte) error {
		if len(v) < 12 {
			return fmt.Errorf("%w: in-flight record of %q", errCorrupt, k)
		}
		it, err := decodeItem(v[12:])
		if err != nil {
			return err
		}
		hb, err := queue.CreateBucketIfNotExists([]byte(HostKey(it.URL)))
		if err != nil {
			return err
		}
		if err := hb.Put(v[:12:12], v[12:]); err != nil {
			return err
		}
		if err := seen.Put(k, []byte{stPending}); err != nil {
			return err
		}
		urls = append(urls, append([]byte(nil), k...))
		return nil
	})
	if err != nil {
		return err
	}
	// Deleting while iterating a bbolt cursor skips keys; delete afterwards.
	for _, k := range urls {
		if err := inflight.Delete(k); err != nil {
			return err
		}
	}
	c, err := parseCounts(top.Bucket(bMeta).Get(kCounts))
	if err != nil {
		return err
	}
	c.pending += int64(len(urls))
	c.inflight -= int64(len(urls))
	if c.inflight != 0 || c.pending < 0 || c.done < 0 || c.failed < 0 {
		// The counts are a cache of the seen bucket; rebuild them rather
		// than refuse to open (costs one pass over every URL ever seen).
		if c, err = recount(seen); err != nil {
			return err
		}
	}
	return top.Bucket(bMeta).Put(kCounts, c.bytes())
}

// recount derives the counts from the seen bucket.
func recount(seen *bolt.Bucket) (counts, error) {
	var c counts
	err := seen.ForEach(func(k, v []byte) error {
		if len(v) == 0 {
			return fmt.Errorf("%w: empty state of %q", errCorrupt, k)
		}
		switch v[0] {
		case stPending:
			c.pending++
		case stInflight:
			c.inflight++
		case stDone:
			c.done++
		case stFailed:
			c.failed++
		default:
			return fmt.Errorf("%w: state %q of %q", errCorrupt, v[0], k)
		}
		return nil
	})
	return c, err
}

// resyncTx rebuilds every memory-resident summary from the database. It
// must run in a write transaction so that its version is ordered with the
// snapshots of other commits; it applies its result at once rather than on
// commit because it changes nothing on disk.
func (f *Frontier) resyncTx(tx *bolt.Tx) error {
	top := tx.Bucket(f.top)
	c, err := parseCounts(top.Bucket(bMeta).Get(kCounts))
	if err != nil {
		return err
	}
	heads := make(map[string]qkey)
	err = top.Bucket(bQueue).ForEachBucket(func(name []byte) error {
		k, _ := top.Bucket(bQueue).Bucket(name).Cursor().First()
		if k == nil {
			return nil
		}
		q, err := parseQkey(k)
		if err != nil {
			return err
		}
		heads[string(name)] = q
		return nil
	})
	if err != nil {
		return err
	}
	rk, _ := top.Bucket(bRetry).Cursor().First()

	f.mu.Lock()
	defer f.mu.Unlock()
	f.version++
	v := f.version
	for _, h := range f.hosts {
		if _, ok := heads[h.name]; !ok {
			f.setHead(h, headHint{ver: v})
		}
	}
	for name, q := range heads {
		f.setHead(f.host(name), headHint{has: true, key: q, ver: v})
	}
	f.retry = headHint{ver: v}
	if rk != nil {
		f.retry = headHint{has: true, key: qkey{seq: beUint64(rk)}, ver: v}
	}
	f.stats, f.statsVer = c, v
	f.signal()
	return nil
}

// Close makes blocked and future Next calls return ErrClosed. Add, Done,
// Retry and Fail keep working, so pages in flight can still be completed
// during a graceful shutdown. Close does not close the database: its owner
// does, after the last Done. Close is idempotent.
func (f *Frontier) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.signal()
	return nil
}

// SetHostDelay sets a per-host minimum gap between request starts, such as
// a robots.txt Crawl-delay (the caller caps it). The larger of it and
// Options.PerHostDelay applies. It lives in memory only.
func (f *Frontier) SetHostDelay(hostKey string, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.host(hostKey).delay = d
	f.signal()
}

// HostDelay returns the gap kept between request starts to hostKey: the
// larger of Options.PerHostDelay and its SetHostDelay, as far as this
// process knows (a host swept from memory while idle reads as the option).
func (f *Frontier) HostDelay(hostKey string) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.delay
	if h, ok := f.hosts[hostKey]; ok && h.delay > d {
		d = h.delay
	}
	return d
}

// Stats returns the counts of the newest commit whose commit handler has
// run. It costs a mutex and never touches the database.
func (f *Frontier) Stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return Stats{
		Pending:  int(f.stats.pending),
		InFlight: int(f.stats.inflight),
		Done:     int(f.stats.done),
		Failed:   int(f.stats.failed),
		Hosts:    len(f.active),
	}
}

// State returns the state of a canonical URL: "pending", "inflight",
// "done:<outcome>", "failed:<reason>", or "" if it was never added.
func (f *Frontier) State(ctx context.Context, url string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	var st string
	err := f.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(f.top).Bucket(bSeen).Get([]byte(url))
		if v == nil {
			return nil
		}
		switch v[0] {
		case stPending:
			st = "pending"
		case stInflight:
			st = "inflight"
		case stDone:
			st = "done:" + string(v[1:])
		case stFailed:
			st = "failed:" + string(v[1:])
		default:
			return fmt.Errorf("%w: state %q of %q", errCorrupt, v[0], url)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("frontier: state of %q: %w", url, err)
	}
	return st, nil
}

// Failed calls fn for every failed URL with its reason, in URL order, inside
// one read transaction: fn must not write to the database (bbolt would
// deadlock) and should be quick. An error from fn stops the walk and is
// returned.
func (f *Frontier) Failed(ctx context.Context, fn func(url, reason string) error) error {
	return f.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(f.top).Bucket(bFailed).Cursor()
		n := 0
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if n++; n%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if err := fn(string(k), string(v)); err != nil {
				return err
			}
		}
		return ctx.Err()
	})
}

// host returns the summary of name, creating it. f.mu must be held.
func (f *Frontier) host(name string) *host {
	h := f.hosts[name]
	if h == nil {
		h = &host{name: name, activeAt: -1}
		f.hosts[name] = h
	}
	return h
}

// setHead applies a queue-head snapshot if it is newer. f.mu must be held.
func (f *Frontier) setHead(h *host, hint headHint) {
	if hint.ver < h.head.ver {
		return
	}
	h.head = hint
	switch {
	case hint.has && h.activeAt < 0:
		h.activeAt = len(f.active)
		f.active = append(f.active, h)
	case !hint.has && h.activeAt >= 0:
		last := f.active[len(f.active)-1]
		f.active[h.activeAt] = last
		last.activeAt = h.activeAt
		f.active[len(f.active)-1] = nil
		f.active = f.active[:len(f.active)-1]
		h.activeAt = -1
	}
}

// signal wakes every waiting Next. f.mu must be held.
func (f *Frontier) signal() {
	close(f.wake)
	f.wake = make(chan struct{})
}
