package crawler

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/storage"
)

// sharedDone is the completion of a page judged in a distributed crawl,
// recorded in the worker's data directory already: its finish in the
// shared queue (outcome and links), the claim its completion settles
// (confirmed for a stored page, released for a copy claimed in its
// look-up) and the drop record to count. The worker sends it with its
// next Next, in one round trip when the queue and the index share a Redis
// client (completeShared).
type sharedDone struct {
	p       *page
	outcome string
	links   []frontier.Item
	drop    *storage.DropRecord
	id, seq uint64 // the page's ID and its claim's seq (0: no claim)
	release bool   // release the claim instead of confirming it
}

// later returns p's completion with outcome, its links when follow is set
// (and the page allows it) and its drop record d.
func (c *Crawler) later(p *page, outcome string, follow bool, d *storage.DropRecord) *sharedDone {
	return &sharedDone{p: p, outcome: outcome, links: c.followed(p, follow), drop: d}
}

// releasing makes d release claim seq of page id (none when seq is 0).
func (d *sharedDone) releasing(id, seq uint64) *sharedDone {
	d.id, d.seq, d.release = id, seq, seq != 0
	return d
}

// pipeQueue is a shared queue that finishes a URL in one round trip with
// other commands, and with its next Next (redisfrontier.Frontier).
type pipeQueue interface {
	FinishWith(ctx context.Context, it frontier.Item, outcome string, links []frontier.Item, stage func(redis.Pipeliner)) error
	FinishNext(ctx context.Context, it frontier.Item, outcome string, links []frontier.Item, stage func(redis.Pipeliner)) (next frontier.Item, ok bool, finErr, nextErr error)
	Client() redis.UniversalClient
}

// pipeIndex is a shared index whose confirm and release can ride in
// another's pipeline (redisindex.Index).
type pipeIndex interface {
	ConfirmOn(ctx context.Context, pipe redis.Pipeliner, seq uint64, id string) func() error
	ReleaseOn(ctx context.Context, pipe redis.Pipeliner, seq uint64, id string) func() error
	Client() redis.UniversalClient
}

// onePipeline returns the queue and the index when both are on the same
// Redis client, so that a page's claim, its finish and the worker's next
// Next go in one round trip (completeShared).
func (c *Crawler) onePipeline() (pipeQueue, pipeIndex, bool) {
	q, ok := c.dist.Queue.(pipeQueue)
	if !ok {
		return nil, nil, false
	}
	x, ok := c.dist.Index.(pipeIndex)
	if !ok || q.Client() != x.Client() {
		return nil, nil, false
	}
	return q, x, true
}

// completeShared sends d: the claim's confirm (or release) first, so that
// a stored page's links are queued after its entry is committed, then the
// finish and, when next is set, one attempt at the worker's next URL, in
// one pipelined round trip when onePipeline allows (else the claim, then
// the finish, and no next). ok is set when it handed out a URL; otherwise
// the worker calls Next. The finish does not wait for the confirm's
// answer: a confirm that failed leaves the claim recorded in the data
// directory, for the next run to confirm (a claim lost meanwhile is
// claimed again at once, as confirm does).
func (c *Crawler) completeShared(ctx context.Context, d *sharedDone, next bool) (it frontier.Item, ok bool, err error) {
	q, x, pipelined := c.onePipeline()
	if !pipelined {
		if err := c.settleClaim(ctx, d, nil); err != nil {
			return frontier.Item{}, false, err
		}
		return frontier.Item{}, false, c.finished(ctx, d, c.queue.Finish(ctx, d.p.item, d.outcome, d.links), nil)
	}
	var settled func() error
	stage := func(pipe redis.Pipeliner) {
		switch {
		case d.seq == 0:
		case d.release:
			settled = x.ReleaseOn(ctx, pipe, d.seq, c.entryID(d.id))
		default:
			settled = x.ConfirmOn(ctx, pipe, d.seq, c.entryID(d.id))
		}
	}
	var ferr, nerr error
	if next {
		it, ok, ferr, nerr = q.FinishNext(ctx, d.p.item, d.outcome, d.links, stage)
	} else {
		ferr = q.FinishWith(ctx, d.p.item, d.outcome, d.links, stage)
	}
	if nerr != nil {
		nerr = fmt.Errorf("crawler: next url: %w", nerr)
	}
	return it, ok, errors.Join(c.finished(ctx, d, ferr, c.settleClaim(ctx, d, settled)), nerr)
}

// settleClaim confirms or releases d's claim: settled gives the answer of
// the script sent in a pipeline, and without it (nothing was sent) the
// index is asked.
func (c *Crawler) settleClaim(ctx context.Context, d *sharedDone, settled func() error) error {
	defer c.dist.waits.settled(d.seq)
	switch {
	case d.seq == 0:
		return nil
	case d.release:
		var err error
		if settled != nil {
			err = settled()
		} else {
			err = c.releaseClaim(ctx, d.seq, c.entryID(d.id))
		}
		if err != nil {
			return fmt.Errorf("crawler: release claim of %s: %w", d.p.item.URL, err)
		}
		return nil
	case settled == nil:
		return c.confirm(ctx, d.id, d.seq, false)
	}
	return c.confirmed(ctx, d.id, d.seq, settled(), false)
}

// finished ends d given its finish's error ferr and its claim's cerr: the
// failed and skipped URLs recorded in the data directory, a lost lease
// forgiven, the page counted when both went well.
func (c *Crawler) finished(ctx context.Context, d *sharedDone, ferr, cerr error) error {
	if ferr == nil {
		ferr = c.recordLocal(ctx, d.p.item, d.outcome, false)
	}
	if ferr = c.lostLease(ferr, d.p.item); ferr != nil {
		ferr = fmt.Errorf("crawler: finish %s: %w", d.p.item.URL, ferr)
	}
	if err := errors.Join(cerr, ferr); err != nil {
		return err
	}
	c.count(d.p, d.drop)
	return nil
}
