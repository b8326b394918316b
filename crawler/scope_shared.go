package crawler

import (
	"context"
	"fmt"
	"time"
)

// SharedScope is a shared frontier that shares the crawl's scope as it
// grows (redisfrontier.Frontier): whether it is the seeds' hosts, and the
// hosts of their sites the seeds answered from (see seedAnswered), so
// that every worker follows links to them, not only the one that fetched
// the seed, and a worker that joined without seeds widens the scope too
// when it fetches one.
type SharedScope interface {
	// MarkScopeFromSeeds records that the crawl's scope is its seeds'
	// hosts.
	MarkScopeFromSeeds(ctx context.Context) error
	// AddScopeHost records host, which seed answered from.
	AddScopeHost(ctx context.Context, host, seed string) error
	// SharedScope returns what was recorded.
	SharedScope(ctx context.Context) (fromSeeds bool, hosts []string, err error)
}

// scopeEvery is how often a worker reads the shared scope for hosts other
// workers' seeds answered from: a link to such a host found before is not
// followed by this worker (another page usually links there again).
const scopeEvery = time.Second

// syncScope records this worker's kind of scope in the shared frontier
// (start, with its seeds' hosts) or takes the crawl's (joined), and adds
// the hosts recorded so far. It runs before any page is fetched.
func (c *Crawler) syncScope(ctx context.Context) error {
	ss, ok := c.dist.Queue.(SharedScope)
	if !ok {
		return nil
	}
	if c.scope.growing() {
		if err := ss.MarkScopeFromSeeds(ctx); err != nil {
			return fmt.Errorf("crawler: %w", err)
		}
	}
	return c.readScope(ctx, ss)
}

// readScope adds the hosts recorded in the shared scope to this worker's.
func (c *Crawler) readScope(ctx context.Context, ss SharedScope) error {
	fromSeeds, hosts, err := ss.SharedScope(ctx)
	if err != nil {
		return fmt.Errorf("crawler: %w", err)
	}
	if !fromSeeds {
		return nil
	}
	c.scope.grow()
	for _, h := range hosts {
		if c.scope.add(h) {
			c.opts.Logger.Info("scope: a seed answered from another host on another worker, now crawled here too", "host", h)
		}
	}
	return nil
}

// scopeLoop reads the shared scope every scopeEvery until ctx ends.
func (c *Crawler) scopeLoop(ctx context.Context) {
	ss, ok := c.dist.Queue.(SharedScope)
	if !ok {
		return
	}
	t := time.NewTicker(scopeEvery)
	defer t.Stop()
	failing := false // logged once per run of failures
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := c.readScope(ctx, ss)
		if err != nil && ctx.Err() == nil && !failing {
			c.opts.Logger.Warn("reading the shared scope failed; reading it again every second", "error", err)
		}
		failing = err != nil
	}
}
