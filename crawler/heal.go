package crawler

import (
	"context"
	"time"

	"github.com/simcrawl/simcrawl/contentseen"
)

// healEvery is how often a worker asks its shared index whether the store
// behind it restarted (contentseen.Healer): well within the index's settle
// window, during which claims wait for every worker's replay.
const healEvery = time.Second

// healLoop calls the shared index's Heal once every healEvery until ctx
// ends, when the index is a contentseen.Healer (redisindex): after a Redis
// restart that may have lost its last second of writes, this worker writes
// its recent claims again before any worker claims a page, even while it
// is itself fetching and claims nothing. It logs what each restart cost.
func (c *Crawler) healLoop(ctx context.Context) {
	h, ok := c.dist.Index.(contentseen.Healer)
	if !ok {
		return
	}
	t := time.NewTicker(healEvery)
	defer t.Stop()
	failing := false // logged once per run of failures (a Redis that lost the crawl stops the worker anyway)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rep, err := h.Heal(ctx)
		if err == nil {
			failing = false
		}
		switch {
		case err != nil:
			if ctx.Err() == nil && !failing {
				c.opts.Logger.Warn("checking the shared index for a restart failed; checking again every second", "error", err)
			}
			failing = true
		case rep.Late > 0:
			c.opts.Logger.Warn("the shared index restarted and this worker wrote its recent claims again after other workers could claim: a copy of one of those pages judged in between may be stored beside it",
				"restarts", rep.Restarts, "replayed", rep.Replayed, "late", rep.Late)
		case rep.Restarts > 0:
			c.opts.Logger.Info("the shared index restarted: this worker wrote its recent claims again before any new claim",
				"restarts", rep.Restarts, "replayed", rep.Replayed)
		}
	}
}
