package crawler

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/storage"
)

// ErrLocked is returned by Open when another process holds the data
// directory.
var ErrLocked = errors.New("crawler: data directory is in use by another crawl")

// DBFile is the name of the bbolt file inside the data directory. It holds
// the page store, the ContentSeen index and the frontier, so one write
// transaction can record a page's outcome in all three.
const DBFile = "crawl.db"

// Crawler runs one crawl over a data directory. Open it, Run it once, Close
// it. Run is not safe to call concurrently with itself; Stats is safe to call
// at any time.
type Crawler struct {
	opts     Options
	scope    *liveScope // opts.Scope, and the hosts seeds answered from
	db       *bolt.DB
	index    *contentseen.BoltIndex
	store    *storage.Store
	frontier *frontier.Frontier
	// queue is the frontier the workers drive: frontier, or the shared
	// queue of a distributed crawl (Options.Distributed).
	queue   frontier.Queue
	dist    *distributed // nil unless Options.Distributed is set
	dropLog *storage.DropLog
	fetcher *Fetcher
	fper    *contentseen.Fingerprinter

	metrics    *metrics
	metricsSrv *metricsServer // nil unless Options.MetricsAddr is set
	k          int            // the candidate radius (Options.K)
	shortK     int            // short texts' radius (shortRadius), >= k
	thresholds contentseen.Thresholds

	robotsDone sync.Map // host -> struct{}: Crawl-delay looked up

	// commitMu serialises commit (transaction + drop-log line), so the
	// drop log follows commit order.
	commitMu sync.Mutex
	// releasedAt is the bytes of pages the database's transactions had
	// allocated at the last releaseWritten check, releases how many times
	// it released the mapping; releaseEvery and mappedBudget are its
	// limits, set by Open (all guarded by commitMu).
	releasedAt, releases       int64
	releaseEvery, mappedBudget int64

	stats counters
	// stopTaking is cancelled when MaxPages is reached.
	stopTaking context.CancelFunc
	// storedBefore counts the pages stored by earlier runs, for MaxPages.
	storedBefore int64
	// retriedFailed counts the failed URLs Run queued again, for the summary.
	retriedFailed int
}

// Open opens (or creates) the data directory and everything in it. A second
// process opening the same directory gets ErrLocked within OpenTimeout.
// The metrics address is bound first: a busy port fails Open before the
// data directory is created.
func Open(opts Options) (_ *Crawler, err error) {
	opts.setDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	var layout contentseen.Layout // LayoutAuto: known once the database is open
	if opts.Layout != LayoutAuto {
		var err error
		if layout, err = namedLayout(opts.Layout, opts.K); err != nil {
			return nil, err
		}
	}
	fper, err := contentseen.NewFingerprinter(opts.Features)
	if err != nil {
		return nil, fmt.Errorf("crawler: %w", err)
	}
	fetcher, err := NewFetcher(opts.Fetch)
	if err != nil {
		return nil, err
	}
	var ln net.Listener // the metrics listener; Open's Crawler owns it once served
	if opts.MetricsAddr != "" {
		if ln, err = listenMetrics(opts.MetricsAddr); err != nil {
			return nil, err
		}
		defer func() {
			if err != nil {
				if cerr := ln.Close(); cerr != nil && !errors.Is(cerr, net.ErrClosed) {
					err = errors.Join(err, fmt.Errorf("crawler: metrics listener: %w", cerr))
				}
			}
		}()
	}
	if err := os.MkdirAll(opts.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("crawler: create data directory: %w", err)
	}
	if err := RefuseLostStore(opts.DataDir, opts.DropLog); err != nil {
		return nil, err
	}
	db, err := OpenWritable(opts.DataDir, opts.OpenTimeout)
	if err != nil {
		return nil, err
	}
	c := &Crawler{opts: opts, db: db, fetcher: fetcher, fper: fper, k: opts.K, thresholds: opts.Thresholds,
		releaseEvery: releaseEvery, mappedBudget: mappedBudget,
		scope: &liveScope{scope: opts.Scope, grows: opts.scopeFromSeeds}}
	if err := c.loadSeedHosts(); err != nil {
		return nil, errors.Join(fmt.Errorf("crawler: read the seeds' hosts: %w", err), c.Close())
	}
	if opts.Layout == LayoutAuto {
		if layout, err = autoLayout(db, opts.K, opts.ExpectedPages); err != nil {
			return nil, errors.Join(err, c.Close())
		}
	}
	c.shortK = c.shortRadius(layout)
	if err := c.openParts(layout); err != nil {
		return nil, errors.Join(err, c.Close()) // Close stops what openParts started
	}
	c.metrics = newMetrics(c)
	if ln != nil {
		c.metricsSrv = serveMetrics(ln, c.metrics.reg)
		opts.Logger.Info("serving metrics", "url", "http://"+c.metricsSrv.ln.Addr().String()+"/metrics")
	}
	return c, nil
}

func (c *Crawler) openParts(layout contentseen.Layout) error {
	if err := c.keepLegacyTokenizer(); err != nil {
		return err
	}
	// The drop log is checked against the store, read through a read-only
	// view, before anything writes to crawl.db (storage.New commits its
	// buckets, the index and the frontier may write): a log that disagrees
	// leaves both files as they were. Only a crash's missing tail is ever
	// appended to the log.
	view, err := storage.New(c.db, storage.Options{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("crawler: %w", err)
	}
	if err := reconcileDropLog(context.Background(), c.opts.DataDir, c.opts.DropLog, view); err != nil {
		return err
	}
	c.store, err = storage.New(c.db, storage.Options{KeepDropText: c.opts.KeepDropText})
	if err != nil {
		return fmt.Errorf("crawler: %w", err)
	}
	// The tables are held in memory for the judge's look-ups. A worker of
	// a distributed crawl judges by the shared index, and ContentSeenOff
	// not at all: their own index only takes pages (an exact look-up each,
	// a few blocks), which is not worth up to IndexMemory of decoded tables.
	memory := c.opts.IndexMemory
	if c.opts.Distributed != nil || c.opts.ContentSeenOff {
		memory = 0
	}
	c.index, err = contentseen.NewBoltIndex(c.db, contentseen.BoltOptions{Layout: layout, Scheme: c.opts.Features.String(), MemoryLimit: memory})
	if err != nil {
		return fmt.Errorf("crawler: %w%s", err, c.schemeHint(layout))
	}
	delay := c.opts.Delay
	if delay == 0 {
		delay = -1 // the frontier reads 0 as its default; we mean none
	}
	c.frontier, err = frontier.New(c.db, frontier.Options{PerHostInFlight: c.opts.PerHost, PerHostDelay: delay})
	if err != nil {
		return fmt.Errorf("crawler: %w", err)
	}
	c.queue = c.frontier
	if err := c.db.Update(func(tx *bolt.Tx) error { return putK(tx, c.k) }); err != nil {
		return fmt.Errorf("crawler: record k: %w", err)
	}
	if c.opts.Distributed != nil {
		if err := c.openDistributed(); err != nil {
			return err
		}
	}
	c.dropLog, err = storage.OpenDropLog(c.opts.DropLog)
	if err != nil {
		return fmt.Errorf("crawler: %w", err)
	}
	return nil
}

// keepLegacyTokenizer lets a data directory made before tokenizer 2 keep
// working as it is: when its index records the same feature options with
// tokenizer 1, the crawl fingerprints with tokenizer 1 (no Traditional to
// Simplified conversion, no bigrams for kana and Thai) instead of refusing
// the directory or mixing two kinds of fingerprints in one index.
func (c *Crawler) keepLegacyTokenizer() error {
	var legacy contentseen.Options
	var ok bool
	if err := c.db.View(func(tx *bolt.Tx) error {
		if _, scheme, found := contentseen.ReadBoltMeta(tx, ""); found {
			legacy, ok = contentseen.LegacyScheme(scheme, c.opts.Features)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("crawler: read the index scheme: %w", err)
	}
	if !ok {
		return nil
	}
	fper, err := contentseen.NewFingerprinter(legacy)
	if err != nil {
		return fmt.Errorf("crawler: %w", err)
	}
	c.opts.Logger.Info("the data directory's index was made with tokenizer 1; continuing with it (new data directories use tokenizer 2)", "scheme", legacy.String())
	c.fper, c.opts.Features = fper, legacy
	return nil
}

// schemeHint tells how to reopen a data directory whose index was built
// with another layout or feature scheme than asked (the layout given):
// the settings that differ, "" if it records none.
func (c *Crawler) schemeHint(asked contentseen.Layout) string {
	var layout, scheme string
	var ok bool
	if err := c.db.View(func(tx *bolt.Tx) error {
		layout, scheme, ok = contentseen.ReadBoltMeta(tx, "")
		return nil
	}); err != nil || !ok {
		return ""
	}
	var sets, keys []string
	if layout != asked.Name() {
		sets, keys = append(sets, "--set contentseen.layout="+layout+" (or auto)"), append(keys, "layout")
	}
	if scheme != c.opts.Features.String() {
		sets, keys = append(sets, "--set contentseen.features="+scheme), append(keys, "features")
	}
	if len(sets) == 0 {
		return ""
	}
	return fmt.Sprintf("; to continue this crawl use %s (as config keys: %s under contentseen), or start a new --data directory",
		strings.Join(sets, " "), strings.Join(keys, " and "))
}

// Close closes the drop log and the data directory.
func (c *Crawler) Close() error {
	var errs []error
	if c.metricsSrv != nil {
		errs = append(errs, c.metricsSrv.close()) // first: its gauges read the database
	}
	if c.dropLog != nil {
		errs = append(errs, c.dropLog.Close())
	}
	if c.index != nil {
		errs = append(errs, c.index.Close())
	}
	errs = append(errs, c.db.Close())
	return errors.Join(errs...)
}

// Run crawls until the frontier is drained, MaxPages pages are stored, or
// ctx is cancelled. On cancellation it stops taking URLs, lets requests in
// flight finish (bounded by the request timeout), and returns ctx's error;
// everything decided so far is saved and a later Run resumes.
func (c *Crawler) Run(ctx context.Context) (*Summary, error) {
	start := time.Now()
	if c.opts.RetryFailed {
		retry := c.frontier.RetryFailed
		if c.dist != nil {
			retry = c.retryFailedShared
		}
		n, err := retry(ctx)
		if err != nil {
			return nil, fmt.Errorf("crawler: retry failed URLs: %w", err)
		}
		c.opts.Logger.Info("failed URLs queued again", "urls", n)
		c.retriedFailed = n
	}
	if c.dist != nil {
		// Claims a crash left stored but unconfirmed, before anything
		// else is judged against the shared index.
		if err := c.confirmStored(ctx); err != nil {
			return nil, err
		}
		if err := c.syncScope(ctx); err != nil {
			return nil, err
		}
	}
	if err := c.addSeeds(ctx); err != nil {
		return nil, err
	}
	pages, _, err := c.store.Counts(ctx)
	if err != nil {
		return nil, fmt.Errorf("crawler: count pages: %w", err)
	}
	c.storedBefore = int64(pages)
	// take stops handing out URLs; work lets pages in flight finish after a
	// stop, up to three request timeouts plus a little, then gives up on them
	// (the frontier puts them back to pending on the next Open).
	take, stopTaking := context.WithCancel(ctx)
	c.stopTaking = stopTaking
	defer stopTaking()
	work, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	drainDone := make(chan struct{})
	go func() {
		defer close(drainDone)
		select {
		case <-ctx.Done():
			// A page may take three timeouts: robots.txt for its
			// Crawl-delay, robots.txt again in Fetch (when it failed),
			// then the page.
			t := time.NewTimer(3*c.fetcher.opts.Timeout + 2*time.Second)
			defer t.Stop()
			select {
			case <-t.C:
				cancelWork()
			case <-work.Done():
			}
		case <-work.Done():
		}
	}()

	statusDone := c.startStatus(start)
	recheckDone := func() {}
	if c.dist != nil {
		rctx, stop := context.WithCancel(work)
		var loops sync.WaitGroup
		for _, loop := range []func(context.Context){c.recheckLoop, c.healLoop, c.scopeLoop} {
			loops.Add(1)
			go func() {
				defer loops.Done()
				loop(rctx)
			}()
		}
		recheckDone = func() { stop(); loops.Wait() }
	}
	var wg sync.WaitGroup
	errc := make(chan error, c.opts.Parallelism+1)
	for range c.opts.Parallelism {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.worker(take, work); err != nil {
				errc <- err
				stopTaking()
			}
		}()
	}
	wg.Wait()
	recheckDone()
	if c.dist != nil {
		errc <- c.flushConfirmed()
	}
	cancelWork()
	<-drainDone
	statusDone()
	close(errc)
	var errs []error
	for err := range errc {
		if err != nil {
			errs = append(errs, err)
		}
	}
	sum, serr := c.summary(ctx, start)
	if err := errors.Join(errs...); err != nil {
		return sum, diskFull(err, c.opts.DataDir)
	}
	if serr != nil {
		return nil, serr
	}
	return sum, ctx.Err()
}

// worker takes URLs and processes them until the queue is drained, take
// ends or a page fails the crawl. In a distributed crawl a page's
// completion goes with the worker's next Next (completeShared).
func (c *Crawler) worker(take, work context.Context) error {
	var done *sharedDone // the last page's completion, not yet sent
	for {
		var it frontier.Item
		var ok bool
		if done != nil {
			var err error
			it, ok, err = c.completeShared(work, done, take.Err() == nil && !c.maxPagesReached())
			done = nil
			if err != nil {
				if work.Err() != nil {
					return nil // shutting down: the page stays in flight and is retried on resume
				}
				c.metrics.errors.WithLabelValues(errKindStore).Inc()
				return err
			}
		}
		if !ok {
			if c.maxPagesReached() {
				c.stopTaking()
				return nil
			}
			var err error
			it, err = c.queue.Next(take)
			if errors.Is(err, frontier.ErrDrained) || take.Err() != nil {
				return nil
			}
			if err != nil {
				return fmt.Errorf("crawler: next url: %w", err)
			}
		}
		c.stats.inFlight.Add(1)
		var err error
		done, err = c.process(work, it)
		c.stats.inFlight.Add(-1)
		if err != nil {
			if work.Err() != nil {
				return nil // shutting down: the page stays in flight and is retried on resume
			}
			c.metrics.errors.WithLabelValues(errKindStore).Inc()
			return err
		}
	}
}

func (c *Crawler) addSeeds(ctx context.Context) error {
	items := make([]frontier.Item, 0, len(c.opts.Seeds))
	for _, s := range c.opts.Seeds {
		cu, err := frontier.Canonical(s)
		if err != nil {
			return fmt.Errorf("crawler: seed %q: %w", s, err)
		}
		items = append(items, frontier.Item{URL: cu, Seed: true})
	}
	if _, err := c.queue.Add(ctx, items...); err != nil {
		return fmt.Errorf("crawler: add seeds: %w", err)
	}
	return nil
}

// SeedHosts returns the host names of seeds, the default crawl scope.
func SeedHosts(seeds []string) []string {
	var hosts []string
	seen := map[string]bool{}
	for _, s := range seeds {
		u, err := url.Parse(s)
		if err != nil || u.Hostname() == "" {
			continue
		}
		h := strings.ToLower(u.Hostname())
		if !seen[h] {
			seen[h] = true
			hosts = append(hosts, h)
		}
	}
	return hosts
}

// counters are the live figures of one Run. Safe for concurrent use.
type counters struct {
	fetched, stored, thin, exact, near, skipped, errors, retries atomic.Int64
	inFlight                                                     atomic.Int64
	held                                                         atomic.Int64 // fetched, then left queued at MaxPages
	decided                                                      atomic.Int64 // dedup records whose outcome this run recorded (or found recorded)
}
