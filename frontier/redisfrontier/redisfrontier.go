package redisfrontier

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/internal/redisconn"
)

var (
	// ErrIncompatible is returned by Open when the crawl's namespace holds
	// keys of another format or configuration, or the server is too old.
	ErrIncompatible = errors.New("redisfrontier: incompatible redis or crawl")
	// ErrLost is returned by every operation when the crawl's meta hash
	// is gone from Redis: the server lost the crawl's keys (restarted
	// without its append-only file, flushed, or evicting keys under
	// maxmemory). Nothing is written then: the crawl is not "drained".
	ErrLost    = errors.New("redisfrontier: the crawl's keys are gone from redis")
	errCorrupt = errors.New("redisfrontier: corrupt record")
)

// Format is stored in the crawl's meta hash; Open refuses a namespace with
// another one.
const Format = "simcrawl-frontier/1"

// Options configure a Frontier. The zero values give the defaults.
type Options struct {
	// PerHostInFlight, PerHostDelay and Now as in frontier.Options, except
	// that the in-flight limit holds across all workers, and that without
	// Now politeness and leases use the Redis server's clock (TIME), so
	// workers' clocks need not agree. Bucket is unused. PerHostInFlight and
	// PerHostDelay must be the same for every worker of a crawl: Open
	// refuses a worker whose values differ from those the crawl was made
	// with.
	frontier.Options

	// Name is the crawl's name: its keys are simcrawl:{Name}:fr:*. Up to
	// 64 letters, digits, '.', '_' or '-'. Required.
	Name string

	// Worker names this process in leases; default host:pid:random. Two
	// live workers must not share one.
	Worker string

	// LeaseTTL is how long a worker's URLs stay leased without a renewal
	// before any worker may hand them out again; default 30s. A background
	// goroutine renews every LeaseTTL/3.
	LeaseTTL time.Duration

	// Poll bounds how long Next sleeps before asking Redis again when
	// nothing is ready (other workers may queue or free URLs at any time);
	// default 100ms.
	Poll time.Duration

	// OnError, if set, is told of errors that no caller sees: failed lease
	// renewals, which are retried within a second. It must not block.
	OnError func(error)
}

// Frontier is a frontier.Queue kept in a Redis server and shared by every
// worker process opened on the same crawl name. It is safe for concurrent
// use. Open starts one goroutine, which renews the worker's leases until
// Leave.
type Frontier struct {
	rdb     redis.UniversalClient
	addr    string
	prefix  string
	keys    []string // {meta key}: routes every script to the crawl's slot
	worker  string
	limit   int
	delay   time.Duration
	ttl     time.Duration
	poll    time.Duration
	now     func() time.Time // nil: Redis TIME
	onError func(error)

	callPrefix string        // random, so call ids never repeat across workers and restarts
	calls      atomic.Uint64 // numbers call ids (see callID)

	closeCtx context.Context // cancelled by Close: ends Next's retries
	closeFn  context.CancelFunc
	stopBeat context.CancelFunc
	beatDone chan struct{}

	mu     sync.Mutex               // guards every field below
	held   map[string]frontier.Item // handed out by Next, not yet completed
	delays map[string]time.Duration // SetHostDelay as this process knows it
	unsent map[string]time.Duration // SetHostDelay not yet written to Redis
	stats  frontier.Stats           // counts of the newest reply
	wake   chan struct{}            // closed and replaced by signal
	closed bool
	left   bool
}

var _ frontier.Queue = (*Frontier)(nil)

var validName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// Open joins the crawl o.Name on the Redis server rdb talks to, creating it
// if the namespace is empty. rdb belongs to the caller, who closes it after
// Leave. Open refuses a server older than Redis 7.0 and a namespace made
// with another Format, PerHostInFlight or PerHostDelay (ErrIncompatible),
// and names the server's address when it cannot reach it.
func Open(ctx context.Context, rdb redis.UniversalClient, o Options) (*Frontier, error) {
	addr := redisconn.Addr(rdb)
	if !validName.MatchString(o.Name) {
		return nil, fmt.Errorf("redisfrontier: crawl name %q: want 1 to 64 letters, digits, '.', '_' or '-'", o.Name)
	}
	if o.PerHostInFlight <= 0 {
		o.PerHostInFlight = 2
	}
	if o.PerHostDelay == 0 {
		o.PerHostDelay = time.Second
	} else if o.PerHostDelay < 0 {
		o.PerHostDelay = 0
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = 30 * time.Second
	}
	if o.Poll <= 0 {
		o.Poll = 100 * time.Millisecond
	}
	if o.Worker == "" {
		var err error
		if o.Worker, err = workerID(); err != nil {
			return nil, err
		}
	}
	if err := redisconn.CheckServers(ctx, rdb, ErrIncompatible); err != nil {
		return nil, fmt.Errorf("redisfrontier: %w", err)
	}
	prefix := "simcrawl:{" + o.Name + "}:fr:"
	rnd := make([]byte, 8)
	if _, err := rand.Read(rnd); err != nil {
		return nil, fmt.Errorf("redisfrontier: call ids: %w", err)
	}
	f := &Frontier{
		rdb:     rdb,
		addr:    addr,
		prefix:  prefix,
		keys:    []string{prefix + "meta"},
		worker:  o.Worker,
		limit:   o.PerHostInFlight,
		delay:   o.PerHostDelay,
		ttl:     o.LeaseTTL,
		poll:    o.Poll,
		now:     o.Now,
		onError: o.OnError,
		held:    make(map[string]frontier.Item),
		delays:  make(map[string]time.Duration),
		unsent:  make(map[string]time.Duration),
		wake:    make(chan struct{}),

		callPrefix: hex.EncodeToString(rnd),
	}
	// Load the scripts one by one, not in a pipeline: Script.Load keeps
	// the hash its command returns, which is still "" when the command is
	// only queued, and every Run would then send EVALSHA "", get NOSCRIPT
	// and send the whole source again with EVAL. Through a ClusterClient,
	// ScriptLoad goes to every node (go-redis's ForEachShard).
	for _, s := range scripts {
		if err := s.Load(ctx, rdb).Err(); err != nil {
			return nil, fmt.Errorf("redisfrontier: load scripts into redis at %s: %w", addr, err)
		}
	}
	if err := f.checkMeta(ctx); err != nil {
		return nil, err
	}
	f.closeCtx, f.closeFn = context.WithCancel(context.Background())
	beatCtx, stop := context.WithCancel(context.Background())
	f.stopBeat, f.beatDone = stop, make(chan struct{})
	go f.heartbeat(beatCtx)
	return f, nil
}

// checkMeta creates the crawl's meta hash or compares it with o.
func (f *Frontier) checkMeta(ctx context.Context) error {
	want := map[string]string{
		"format":            Format,
		"per_host_inflight": strconv.Itoa(f.limit),
		"per_host_delay":    f.delay.String(),
	}
	args := make([]any, 0, 2*len(want))
	for _, k := range []string{"format", "per_host_inflight", "per_host_delay"} {
		args = append(args, k, want[k])
	}
	keys := []string{f.keys[0], f.prefix + "url", f.prefix + "n", f.prefix + "seq"}
	res, err := metaScript.Run(ctx, f.rdb, keys, args...).StringSlice()
	if err != nil {
		return fmt.Errorf("redisfrontier: read crawl meta at %s: %w", f.addr, err)
	}
	if len(res) == 1 && res[0] == "nometa" {
		return fmt.Errorf("%w: %s holds frontier keys of crawl %q without its meta hash (%s): written by something else, or damaged",
			ErrIncompatible, f.addr, f.name(), f.keys[0])
	}
	got := map[string]string{}
	for i := 0; i+1 < len(res); i += 2 {
		got[res[i]] = res[i+1]
	}
	if len(got) == 0 {
		return nil // created
	}
	if got["format"] != Format {
		return fmt.Errorf("%w: crawl %q at %s has format %q, this program writes %q", ErrIncompatible, f.name(), f.addr, got["format"], Format)
	}
	for _, k := range []string{"per_host_inflight", "per_host_delay"} {
		if got[k] != want[k] {
			return fmt.Errorf("%w: crawl %q at %s was made with %s %s, this worker has %s (politeness must agree across workers)",
				ErrIncompatible, f.name(), f.addr, k, got[k], want[k])
		}
	}
	return nil
}

func (f *Frontier) name() string {
	return f.prefix[len("simcrawl:{") : len(f.prefix)-len("}:fr:")]
}

// Worker returns this worker's id in leases.
func (f *Frontier) Worker() string { return f.worker }

// Close makes blocked and future Next calls return frontier.ErrClosed,
// also when they are waiting for an unreachable server. Add, Finish,
// Retry, Fail and the lease renewals keep working, so pages in flight can
// be completed; then call Leave. Close is idempotent.
func (f *Frontier) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.closeFn()
	f.signal()
	return nil
}

// Leave closes f, stops renewing its leases and returns the URLs it still
// holds to their queues at once (other workers fetch them without waiting
// for the lease to expire). Call it after completing the pages in flight.
// Leave is idempotent; f is unusable afterwards except for State, Counts
// and Stats.
func (f *Frontier) Leave(ctx context.Context) error {
	if err := f.Close(); err != nil {
		return err
	}
	f.mu.Lock()
	left := f.left
	f.left = true
	f.mu.Unlock()
	if left {
		return nil
	}
	f.stopBeat()
	<-f.beatDone
	if _, _, err := f.call(ctx, leaveScript); err != nil {
		return fmt.Errorf("redisfrontier: leave: %w", err)
	}
	f.mu.Lock()
	clear(f.held)
	f.mu.Unlock()
	return nil
}

// SetHostDelay records d for hostKey in this process at once and in Redis
// with this worker's next Next or lease renewal, from when it applies to
// every worker. See frontier.Queue.
func (f *Frontier) SetHostDelay(hostKey string, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.delays[hostKey] = d
	f.unsent[hostKey] = d
	f.signal()
}

// HostDelay returns the larger of PerHostDelay and the SetHostDelay this
// process made for hostKey (another worker's robots.txt is not asked for).
func (f *Frontier) HostDelay(hostKey string) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return max(f.delay, f.delays[hostKey])
}

// Stats returns the counts of the crawl as of this worker's newest call to
// Redis (every call returns them); Hosts counts hosts with queued URLs.
// Counts asks Redis instead.
func (f *Frontier) Stats() frontier.Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}

// Counts reads the crawl's counts from Redis (one round trip).
func (f *Frontier) Counts(ctx context.Context) (frontier.Stats, error) {
	var s frontier.Stats
	err := f.retry(ctx, func() error {
		v, err := f.rdb.HMGet(ctx, f.prefix+"n", "pending", "inflight", "done", "failed", "hosts").Result()
		if err != nil {
			return err
		}
		n := make([]int, len(v))
		for i, x := range v {
			if x == nil {
				continue
			}
			if n[i], err = strconv.Atoi(x.(string)); err != nil {
				return fmt.Errorf("%w: count %q", errCorrupt, x)
			}
		}
		s = frontier.Stats{Pending: n[0], InFlight: n[1], Done: n[2], Failed: n[3], Hosts: n[4]}
		return nil
	})
	if err != nil {
		return s, fmt.Errorf("redisfrontier: counts: %w", err)
	}
	return s, nil
}

// State returns the state of a canonical URL in the crawl.
func (f *Frontier) State(ctx context.Context, url string) (string, error) {
	var v string
	err := f.retry(ctx, func() error {
		var err error
		v, err = f.rdb.HGet(ctx, f.prefix+"url", url).Result()
		if errors.Is(err, redis.Nil) {
			v, err = "", nil
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("redisfrontier: state of %q: %w", url, err)
	}
	switch {
	case v == "":
		return "", nil
	case v == "p":
		return "pending", nil
	case v == "i":
		return "inflight", nil
	case len(v) >= 2 && v[:2] == "d:":
		return "done:" + v[2:], nil
	case len(v) >= 2 && v[:2] == "f:":
		return "failed:" + v[2:], nil
	}
	return "", fmt.Errorf("redisfrontier: state of %q: %w: %q", url, errCorrupt, v)
}

// ClaimPage takes one page from the crawl's global budget of max stored
// pages (scope.max_pages): ok is false, and nothing is taken, once max
// pages are claimed. A worker claims before it stores a page and gives the
// claim back with ReturnPage if it does not store it after all. One round
// trip; the counter lives with the frontier and survives restarts.
func (f *Frontier) ClaimPage(ctx context.Context, max int) (ok bool, err error) {
	var n int64
	once := f.prefix + "once:" + f.callID()
	err = f.retry(ctx, func() error {
		var err error
		n, err = claimScript.Run(ctx, f.rdb, []string{f.prefix + "stored", once, f.keys[0]}, max, f.onceTTL()).Int64()
		return err
	})
	err = f.lost(err)
	if err != nil {
		return false, fmt.Errorf("redisfrontier: claim page: %w", err)
	}
	return n == 1, nil
}

// ReturnPage gives back a claim of ClaimPage.
func (f *Frontier) ReturnPage(ctx context.Context) error {
	keys := []string{f.prefix + "stored", f.prefix + "once:" + f.callID(), f.keys[0]}
	err := f.lost(f.retry(ctx, func() error { return returnScript.Run(ctx, f.rdb, keys, f.onceTTL()).Err() }))
	if err != nil {
		return fmt.Errorf("redisfrontier: return page: %w", err)
	}
	return nil
}

// Claimed returns how many pages are claimed from the budget.
func (f *Frontier) Claimed(ctx context.Context) (int, error) {
	var n int
	err := f.retry(ctx, func() error {
		var err error
		n, err = f.rdb.Get(ctx, f.prefix+"stored").Int()
		if errors.Is(err, redis.Nil) {
			n, err = 0, nil
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("redisfrontier: claimed pages: %w", err)
	}
	return n, nil
}

// lost turns a script's LOST error reply into one wrapping ErrLost.
func (f *Frontier) lost(err error) error {
	if err != nil && strings.HasPrefix(err.Error(), "LOST ") {
		return fmt.Errorf("%w: crawl %q at %s: %s (restarted without its append-only file, flushed, or evicting keys): "+
			"nothing was written; restore the data or start the crawl again", ErrLost, f.name(), f.addr, strings.TrimPrefix(err.Error(), "LOST "))
	}
	return err
}

// callID returns a new id for a call that must take effect once however
// often it is sent (see replayed in scripts.go).
func (f *Frontier) callID() string {
	return f.callPrefix + "-" + strconv.FormatUint(f.calls.Add(1), 10)
}

// onceTTL is how long Redis keeps a call's reply for its retries, in ms:
// two lease TTLs, as the scripts' ONCE. A call retried later than that
// (Redis unreachable all the while) may take effect twice.
func (f *Frontier) onceTTL() int64 { return 2 * f.ttl.Milliseconds() }

// signal wakes every waiting Next. f.mu must be held.
func (f *Frontier) signal() {
	close(f.wake)
	f.wake = make(chan struct{})
}

func workerID() (string, error) {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("redisfrontier: worker id: %w", err)
	}
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(b)), nil
}
