package redisfrontier

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/frontier"
)

// FinishNext is FinishWith followed, in the same pipelined round trip, by
// one attempt of Next: a worker that finishes a page and asks for the
// next pays one round trip for both. The finish runs first, so the next
// URL may be one of its links. The pipeline is sent again whole while
// Redis is unreachable (the next script carries a call id, so a second
// run hands out the URL of the first).
//
// ok is set when the attempt handed out a URL (next, held as Next's are).
// When none was ready at once, ok is false and the caller calls Next,
// which waits for one or reports the crawl drained. finErr is the
// finish's error, as FinishWith's; nextErr is the attempt's (a reply this
// package did not write; Redis losing the crawl's keys fails the finish
// first), with ok false.
func (f *Frontier) FinishNext(ctx context.Context, it frontier.Item, outcome string, links []frontier.Item, stage func(pipe redis.Pipeliner)) (next frontier.Item, ok bool, finErr, nextErr error) {
	f.mu.Lock()
	closed := f.closed
	delays := f.unsentArgs()
	f.mu.Unlock()
	if closed {
		return frontier.Item{}, false, f.FinishWith(ctx, it, outcome, links, stage), nil
	}
	nextArgs := append(append(f.common(), f.callID(), frontier.HostKey(it.URL), f.waitWindow()), delays...)
	var cmd *redis.Cmd
	finErr = f.finishWith(ctx, it, outcome, links, stage, func(pipe redis.Pipeliner) {
		cmd = nextScript.EvalSha(ctx, pipe, f.keys, nextArgs...)
	})
	if cmd == nil {
		return frontier.Item{}, false, finErr, nil // refused before anything was sent
	}
	// A finish refused (not in flight) still leaves the URL handed out.
	next, ok, nextErr = f.nextReply(cmd, delays)
	if errors.Is(nextErr, errYield) {
		nextErr = nil
		// Another worker polls for the slot: leave it to it for one poll.
		// A ctx that ends cuts the pause short; the caller's Next says so.
		if err := sleep(ctx, nil, f.poll); err != nil {
			return next, ok, finErr, nil
		}
	}
	if finErr != nil && nextErr != nil {
		nextErr = nil // the pipeline's failure, which finErr reports
	}
	return next, ok, finErr, nextErr
}

// nextReply decodes the reply of the next script cmd sent by FinishNext
// with the delay pairs delays.
func (f *Frontier) nextReply(cmd *redis.Cmd, delays []any) (frontier.Item, bool, error) {
	raw, err := cmd.Slice()
	switch {
	case err != nil && redis.HasErrorPrefix(err, "NOSCRIPT"):
		return frontier.Item{}, false, nil // Next loads it
	case err != nil:
		return frontier.Item{}, false, fmt.Errorf("redisfrontier: next: %w", f.lost(err))
	case raw == nil:
		return frontier.Item{}, false, nil // not sent
	}
	res, _, err := f.reply(raw)
	if err != nil {
		return frontier.Item{}, false, fmt.Errorf("redisfrontier: next: %w", err)
	}
	f.sent(delays)
	if len(res) == 3 && res[0] == "item" {
		rec, _ := res[1].(string)
		it, err := decodeRecord(rec)
		if err != nil {
			return frontier.Item{}, false, fmt.Errorf("redisfrontier: next: %w", err)
		}
		f.mu.Lock()
		f.held[it.URL] = it
		f.mu.Unlock()
		return it, true, nil
	}
	if len(res) == 1 && res[0] == "yield" {
		return frontier.Item{}, false, errYield
	}
	if len(res) != 2 || res[0] != "wait" {
		return frontier.Item{}, false, fmt.Errorf("redisfrontier: next: %w: reply %v", errCorrupt, res)
	}
	return frontier.Item{}, false, nil
}

// errYield is nextReply's answer when the attempt yielded the slot its
// finish freed to a waiting worker.
var errYield = errors.New("redisfrontier: yielded to a waiting worker")

// waitWindow is how long (ms) a worker's Next that found nothing counts as
// waiting: a few of its polls.
func (f *Frontier) waitWindow() int64 { return 4 * f.poll.Milliseconds() }
