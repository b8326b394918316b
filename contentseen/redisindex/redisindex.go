package redisindex

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/internal/redisconn"
)

// ErrIncompatible is returned by Open when the crawl's namespace holds an
// index of another format or configuration, or the server is too old.
var ErrIncompatible = errors.New("redisindex: incompatible redis or crawl")

// ErrLost is returned by every operation when the index's meta hash is
// gone from Redis: the server lost the crawl's keys (restarted without its
// append-only file, flushed, or evicting keys under maxmemory). Nothing
// is written then: an index started again from nothing would let copies
// of pages stored before be stored again.
var ErrLost = errors.New("redisindex: the crawl's index keys are gone from redis")

// errCorrupt marks a reply or stored value this package did not write.
var errCorrupt = errors.New("redisindex: corrupt data")

// Format is stored in the index's meta hash; Open refuses a namespace
// with another one.
const Format = "simcrawl-contentseen/1"

// Options configure an Index.
type Options struct {
	// Name is the crawl's name: the index's keys are simcrawl:{Name}:cs:*,
	// beside the frontier's simcrawl:{Name}:fr:* in the same hash slot. Up
	// to 64 letters, digits, '.', '_' or '-'. Required.
	Name string
	// Layout, K, Lease and MaxLag as in contentseen.SharedOptions (zero
	// values: its defaults). They must be the same for every worker of a
	// crawl: Open refuses a worker whose values differ from those the
	// index was created with.
	contentseen.SharedOptions
	// Settle is how long claims wait after the server restarted, while
	// the workers write their recent claims again (DefaultSettle when
	// zero). Whichever worker notices a restart first sets the window
	// with its own value.
	Settle time.Duration
}

// Index is a contentseen.Shared kept in a Redis server (7.0 or later) and
// shared by every worker process opened on the same crawl name. It is
// safe for concurrent use; it starts no goroutine.
type Index struct {
	rdb    redis.UniversalClient
	addr   string
	name   string
	opts   contentseen.SharedOptions
	keys   keys
	width  int        // bytes of a bucket name (the widest table prefix)
	masks  [][]uint64 // per table, the multi-probe masks of a Lookup at K
	leaseM int64      // lease in ms, as the scripts take it
	settle time.Duration

	recent recentLog // the claims to write again after a restart (heal.go)
	heal   healState

	mu     sync.Mutex // guards closed
	closed bool
}

var (
	_ contentseen.Shared         = (*Index)(nil)
	_ contentseen.BatchConfirmer = (*Index)(nil)
)

var validName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// Open joins the index of crawl o.Name on the Redis server rdb talks to,
// creating it if the namespace is empty. rdb belongs to the caller, who
// closes it after Close. Open refuses a server older than Redis 7.0 and a
// namespace made with another Format, layout, K, lease or max lag
// (ErrIncompatible, naming what differs), and names the server's address
// when it cannot reach it.
func Open(ctx context.Context, rdb redis.UniversalClient, o Options) (*Index, error) {
	addr := redisconn.Addr(rdb)
	if !validName.MatchString(o.Name) {
		return nil, fmt.Errorf("redisindex: crawl name %q: want 1 to 64 letters, digits, '.', '_' or '-'", o.Name)
	}
	so := o.SharedOptions.WithDefaults()
	if err := so.Validate(); err != nil {
		return nil, fmt.Errorf("redisindex: %w", err)
	}
	if err := redisconn.CheckServers(ctx, rdb, ErrIncompatible); err != nil {
		return nil, fmt.Errorf("redisindex: %w", err)
	}
	// Scripts first: checkMeta runs one.
	if err := redisconn.EachServer(ctx, rdb, loadScripts); err != nil {
		return nil, fmt.Errorf("redisindex: load scripts: %w", err)
	}
	x := &Index{
		rdb:    rdb,
		addr:   addr,
		name:   o.Name,
		opts:   so,
		keys:   newKeys(o.Name, so.Layout.Tables()),
		leaseM: so.Lease.Milliseconds(),
		settle: o.Settle,
	}
	if x.settle <= 0 {
		x.settle = DefaultSettle
	}
	e := so.Layout.ProbeRadius(so.K)
	for t := range so.Layout.Tables() {
		x.width = max(x.width, (so.Layout.PrefixBits(t)+7)/8)
		x.masks = append(x.masks, contentseen.ProbeMasks(so.Layout.PrefixBits(t), e))
	}
	if err := x.checkMeta(ctx); err != nil {
		return nil, err
	}
	// The generation to heal from: this Index has made no claim yet, so a
	// restart before now needs no replay of its own.
	gen, err := x.epoch(ctx)
	if err != nil {
		return nil, fmt.Errorf("redisindex: %w", err)
	}
	x.heal.gen = gen
	return x, nil
}

// loadScripts puts every script into the server's script cache in one
// pipeline.
func loadScripts(ctx context.Context, c redis.Cmdable, addr string) error {
	pipe := c.Pipeline()
	for _, src := range scriptSources {
		pipe.ScriptLoad(ctx, src)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("redis at %s: %w", addr, err)
	}
	return nil
}

// metaFields are the meta hash's fields in the order Open writes them.
var metaFields = []string{"format", "layout", "k", "lease", "max_lag"}

// wantMeta returns the meta hash this index must find.
func (x *Index) wantMeta() map[string]string {
	return map[string]string{
		"format":  Format,
		"layout":  x.opts.Layout.Name(),
		"k":       strconv.Itoa(x.opts.K),
		"lease":   x.opts.Lease.String(),
		"max_lag": strconv.Itoa(x.opts.MaxLag),
	}
}

// checkMeta creates the index's meta hash or compares it with x's options.
func (x *Index) checkMeta(ctx context.Context) error {
	want := x.wantMeta()
	args := make([]any, 0, 2*len(metaFields))
	for _, f := range metaFields {
		args = append(args, f, want[f])
	}
	res, err := metaScript.Run(ctx, x.rdb, []string{x.keys.meta, x.keys.seq, x.keys.entries}, args...).StringSlice()
	if err != nil {
		if strings.Contains(err.Error(), "WRONGTYPE") {
			return fmt.Errorf("%w: crawl %q at %s: %s is not a hash: written by something else, or damaged",
				ErrIncompatible, x.name, x.addr, x.keys.meta)
		}
		return fmt.Errorf("redisindex: read index meta of crawl %q at %s: %w", x.name, x.addr, err)
	}
	if len(res) == 1 && res[0] == "nometa" {
		return fmt.Errorf("%w: %s holds index keys of crawl %q without its meta hash (%s): written by something else, or damaged",
			ErrIncompatible, x.addr, x.name, x.keys.meta)
	}
	got := map[string]string{}
	for i := 0; i+1 < len(res); i += 2 {
		got[res[i]] = res[i+1]
	}
	if len(got) == 0 {
		return nil // created
	}
	if got["format"] != Format {
		return fmt.Errorf("%w: index of crawl %q at %s has format %q, this program writes %q",
			ErrIncompatible, x.name, x.addr, got["format"], Format)
	}
	var diffs []string
	for _, f := range metaFields[1:] {
		if got[f] != want[f] {
			diffs = append(diffs, fmt.Sprintf("%s %q (this worker: %q)", f, got[f], want[f]))
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%w: index of crawl %q at %s was made with %s; every worker of a crawl must use the same",
			ErrIncompatible, x.name, x.addr, strings.Join(diffs, ", "))
	}
	return nil
}

// Layout implements contentseen.Shared.
func (x *Index) Layout() contentseen.Layout { return x.opts.Layout }

// K implements contentseen.Shared.
func (x *Index) K() int { return x.opts.K }

// Close implements contentseen.Shared: later calls return
// contentseen.ErrClosed. The client and the shared data stay.
func (x *Index) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return contentseen.ErrClosed
	}
	x.closed = true
	return nil
}

func (x *Index) isClosed() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.closed
}

// msTime converts a Redis time in ms.
func msTime(ms int64) time.Time { return time.UnixMilli(ms) }
