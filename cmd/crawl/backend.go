package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/contentseen/redisindex"
	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/frontier/redisfrontier"
)

// errBadBackend marks a malformed backend URL: a usage error (exit 2).
var errBadBackend = errors.New("not a backend URL")

var validCrawlName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// parseBackend checks a backend URL, redis://[user:password@]host[:port][/db]
// (rediss:// for TLS), and returns its client options.
func parseBackend(raw string) (*redis.Options, error) {
	const want = "want redis://host:6379/0"
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %s; %s", errBadBackend, raw, strings.TrimPrefix(err.Error(), "parse "+strconv.Quote(raw)+": "), want)
	}
	switch {
	case u.Scheme != "redis" && u.Scheme != "rediss":
		return nil, fmt.Errorf("%w: %q: the scheme must be redis:// or rediss://; %s", errBadBackend, raw, want)
	case u.Hostname() == "":
		return nil, fmt.Errorf("%w: %q: no host; %s", errBadBackend, raw, want)
	}
	o, err := redis.ParseURL(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v; %s", errBadBackend, raw, err, want)
	}
	return o, nil
}

// backendAddr is the backend URL raw (valid, see parseBackend) without
// its credentials, to record in a data directory.
func backendAddr(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	u.User = nil
	return u.String()
}

// backend is a worker's connection to the crawl's shared parts on Redis.
type backend struct {
	rdb   *redis.Client
	queue *redisfrontier.Frontier
	index *redisindex.Index
}

// openBackend joins the crawl cfg.CrawlName on cfg.Backend as the worker
// of opts.DataDir, and sets opts.Distributed. It refuses a crawl started
// with other crawl-wide settings (checkSettings), and a data directory
// recorded for another crawl (crawler.CheckDirCrawl). A worker without seeds
// and without scope.allow_domains takes the crawl's scope.
func openBackend(ctx context.Context, cfg Config, opts *crawler.Options) (_ *backend, err error) {
	ro, err := parseBackend(cfg.Backend)
	if err != nil {
		return nil, err
	}
	if err := crawler.CheckDirCrawl(opts.DataDir, cfg.CrawlName); err != nil {
		return nil, err
	}
	_, serr := os.Stat(opts.DataDir)
	fresh := errors.Is(serr, os.ErrNotExist)
	worker, err := crawler.WorkerName(opts.DataDir)
	if err != nil {
		return nil, err
	}
	redisLog.Store(opts.Logger) // go-redis's own log lines (see redisLogger)
	b := &backend{rdb: redis.NewClient(ro)}
	ok := false
	defer func() {
		if ok {
			return
		}
		_ = b.close(context.WithoutCancel(ctx), false) // the error that failed the open says more
		if fresh {
			// A failed start leaves no data directory it created.
			if rerr := os.Remove(filepath.Join(opts.DataDir, crawler.WorkerFile)); rerr != nil {
				err = errors.Join(err, fmt.Errorf("backend: remove the worker name: %w", rerr))
			} else if rerr := os.Remove(opts.DataDir); rerr != nil {
				err = errors.Join(err, fmt.Errorf("backend: remove the data directory: %w", rerr))
			}
		}
	}()
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err = b.rdb.Ping(pctx).Err()
	cancel()
	if err != nil {
		return nil, fmt.Errorf("backend: cannot reach redis at %s: %w", ro.Addr, err)
	}
	if err := checkSettings(ctx, b.rdb, ro.Addr, cfg, opts); err != nil {
		return nil, err
	}
	lease := time.Duration(cfg.BackendLease)
	delay := opts.Delay
	if delay == 0 {
		delay = -1 // none: redisfrontier reads 0 as its default
	}
	b.queue, err = redisfrontier.Open(ctx, b.rdb, redisfrontier.Options{
		Name: cfg.CrawlName, Worker: worker, LeaseTTL: lease,
		Options: frontier.Options{PerHostInFlight: opts.PerHost, PerHostDelay: delay},
		OnError: func(err error) { opts.Logger.Warn("backend", "error", err) },
	})
	if err != nil {
		return nil, fmt.Errorf("backend: %w", err)
	}
	layout, err := sharedLayout(cfg)
	if err != nil {
		return nil, err
	}
	// The index looks as far as the widest radius (short texts'); each
	// page's own radius filters its candidates (crawler.Distributed).
	// A layout answering less gives short texts what it answers, as on
	// one machine.
	radius := min(opts.WidestRadius(), layout.MaxK())
	b.index, err = redisindex.Open(ctx, b.rdb, redisindex.Options{Name: cfg.CrawlName,
		SharedOptions: contentseen.SharedOptions{Layout: layout, K: radius, Lease: lease},
		Settle:        time.Duration(cfg.BackendSettle)})
	if err != nil {
		return nil, fmt.Errorf("backend: %w", err)
	}
	if err := crawler.RecordDirCrawl(opts.DataDir, cfg.CrawlName, backendAddr(cfg.Backend)); err != nil {
		return nil, err
	}
	opts.Distributed = &crawler.Distributed{Queue: b.queue, Index: b.index, Worker: worker, Budget: b.queue}
	opts.Logger.Info("joined the distributed crawl", "crawl", cfg.CrawlName, "redis", ro.Addr, "worker", worker)
	ok = true
	return b, nil
}

// sharedLayout is the shared index's layout: contentseen.layout, or for
// auto the one chosen for k and contentseen.expected_pages.
func sharedLayout(cfg Config) (contentseen.Layout, error) {
	cs := cfg.ContentSeen
	if cs.Layout == crawler.LayoutAuto {
		l, err := contentseen.ChooseLayout(cs.K, cs.ExpectedPages)
		if err != nil {
			return l, fmt.Errorf("config: contentseen.layout: %w", err)
		}
		return l, nil
	}
	l, err := contentseen.LayoutByName(cs.Layout)
	if err != nil {
		return l, fmt.Errorf("config: contentseen.layout: %w", err)
	}
	return l, nil
}

// close closes the connection; with leave set it first leaves the crawl
// (this worker's leased URLs go back to the queue at once).
func (b *backend) close(ctx context.Context, leave bool) error {
	var errs []error
	if b.queue != nil && leave {
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if err := b.queue.Leave(lctx); err != nil {
			errs = append(errs, fmt.Errorf("backend: %w", err))
		}
		cancel()
	}
	if b.queue != nil {
		errs = append(errs, b.queue.Close())
	}
	if b.index != nil {
		errs = append(errs, b.index.Close())
	}
	errs = append(errs, b.rdb.Close())
	return errors.Join(errs...)
}

// settingsScript records a crawl's settings (ARGV: field, value, ...) in
// the hash KEYS[1] unless it exists, and returns what the hash holds.
var settingsScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], unpack(ARGV))
end
return redis.call('HGETALL', KEYS[1])
`)

// checkSettings compares the crawl-wide settings of this worker with those
// the crawl was started with (recorded by its first worker in
// simcrawl:{NAME}:crawl) and refuses the worker, naming every difference,
// when they differ: two workers judging or scoping pages differently would
// make one crawl of two. The scope's domains are the configured ones, else
// the seeds' hosts; a worker with neither takes the crawl's.
func checkSettings(ctx context.Context, rdb *redis.Client, addr string, cfg Config, opts *crawler.Options) error {
	allow := cfg.Scope.AllowDomains
	if len(allow) == 0 {
		allow = crawler.SeedHosts(opts.Seeds)
	}
	mine := crawlSettings(cfg, allow)
	fields := slices.Sorted(maps.Keys(mine))
	args := make([]any, 0, 2*len(mine))
	for _, k := range fields {
		args = append(args, k, mine[k])
	}
	key := "simcrawl:{" + cfg.CrawlName + "}:crawl"
	theirs := map[string]string{}
	if len(allow) == 0 {
		// Joining without a scope: only a crawl that has one will do.
		var err error
		theirs, err = rdb.HGetAll(ctx, key).Result()
		if err != nil {
			return fmt.Errorf("backend: read the settings of crawl %q at %s: %w", cfg.CrawlName, addr, err)
		}
		if len(theirs) == 0 {
			return fmt.Errorf("backend: redis at %s holds no crawl %q: start it with --seeds FILE on one worker first (or set scope.allow_domains)", addr, cfg.CrawlName)
		}
		const domains = "scope.allow_domains"
		opts.Scope.AllowDomains = strings.Split(theirs[domains], ",")
		mine[domains] = theirs[domains]
	} else {
		res, err := settingsScript.Run(ctx, rdb, []string{key}, args...).StringSlice()
		if err != nil {
			return fmt.Errorf("backend: read the settings of crawl %q at %s: %w", cfg.CrawlName, addr, err)
		}
		for i := 0; i+1 < len(res); i += 2 {
			theirs[res[i]] = res[i+1]
		}
	}
	var diffs []string
	for _, k := range fields {
		if theirs[k] != mine[k] {
			diffs = append(diffs, fmt.Sprintf("%s is %s there, %s here", k, quoteSetting(theirs[k]), quoteSetting(mine[k])))
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("backend: crawl %q at %s was started with other settings: %s; run every worker with the same config.yaml, or start another crawl with --set crawl_name=NAME",
			cfg.CrawlName, addr, strings.Join(diffs, "; "))
	}
	return nil
}

func quoteSetting(v string) string {
	if v == "" {
		return "(not set)"
	}
	return strconv.Quote(v)
}

// crawlSettings are the settings every worker of a crawl must share, by
// config key. scope.max_pages is not one: it is the crawl's page budget,
// which each worker claims pages from up to its own limit, so a worker
// started with a higher one continues a crawl stopped at the old one
// (crawls started before recorded it; it is no longer compared).
func crawlSettings(cfg Config, allow []string) map[string]string {
	sc, f, cs := cfg.Scope, cfg.Fetch, cfg.ContentSeen
	list := func(xs []string) string { return strings.Join(xs, ",") }
	return map[string]string{
		"scope.allow_domains":        list(allow),
		"scope.deny_domains":         list(sc.DenyDomains),
		"scope.include":              strings.Join(sc.Include, "\n"),
		"scope.exclude":              strings.Join(sc.Exclude, "\n"),
		"scope.max_depth":            strconv.Itoa(sc.MaxDepth),
		"scope.follow_nofollow":      strconv.FormatBool(sc.FollowNoFollow),
		"fetch.per_host":             strconv.Itoa(f.PerHost),
		"fetch.delay":                f.Delay.String(),
		"fetch.respect_robots":       strconv.FormatBool(f.RespectRobots),
		"fetch.max_crawl_delay":      f.MaxCrawlDelay.String(),
		"contentseen.k":              strconv.Itoa(cs.K),
		"contentseen.short_k":        strconv.Itoa(cs.ShortK),
		"contentseen.short_features": strconv.Itoa(cs.ShortFeatures),
		"contentseen.layout":         cs.Layout,
		"contentseen.features":       cs.Features,
		"contentseen.min_features":   strconv.Itoa(cs.MinFeatures),
		"contentseen.similarity":     strconv.FormatFloat(cs.Similarity, 'g', -1, 64),
		"contentseen.containment":    strconv.FormatFloat(cs.Containment, 'g', -1, 64),
		"contentseen.size_ratio":     strconv.FormatFloat(cs.SizeRatio, 'g', -1, 64),
		"backend_lease":              cfg.BackendLease.String(),
	}
}

// backendLost reports whether err says Redis lost the crawl's keys.
func backendLost(err error) bool {
	return errors.Is(err, redisfrontier.ErrLost) || errors.Is(err, redisindex.ErrLost)
}

// firstLoss keeps, of the errors joined in err (each fetching goroutine
// of the worker, and each step of a page, may meet the loss), the first
// saying that Redis lost the crawl's keys, and all the others.
func firstLoss(err error) error {
	seen := false
	var keep []error
	var walk func(error)
	walk = func(e error) {
		if parts := joined(e); parts != nil {
			for _, p := range parts {
				walk(p)
			}
			return
		}
		if backendLost(e) {
			if seen {
				return
			}
			seen = true
		}
		keep = append(keep, e)
	}
	walk(err)
	return errors.Join(keep...)
}

// joined returns the errors err joins when it is an errors.Join (its text
// is theirs, one a line), else nil.
func joined(err error) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return nil
	}
	parts := j.Unwrap()
	texts := make([]string, len(parts))
	for i, p := range parts {
		texts[i] = p.Error()
	}
	if strings.Join(texts, "\n") != err.Error() {
		return nil // an error of its own wrapping several (fmt.Errorf with %w twice)
	}
	return parts
}
