package redisfrontier

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/internal/redisconn"
)

// Next hands out the URL that the shared queue says may be fetched now:
// one Lua script, one round trip, which first returns the URLs of workers
// whose lease expired, moves due retries and hosts whose delay has passed,
// then takes the head of the ready host with the shallowest, oldest URL,
// leases it to this worker and starts the host's delay, all at Redis's
// clock. When nothing is ready Next sleeps until the script's estimate,
// at most Poll, or until this process changes the queue, and asks again.
//
// While Redis is unreachable Next retries with backoff (50ms doubling to
// 2s) until ctx ends or Close; it never fails the crawl for that.
func (f *Frontier) Next(ctx context.Context) (frontier.Item, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(f.closeCtx, cancel)
	defer stop()
	for {
		f.mu.Lock()
		closed, wake := f.closed, f.wake
		delays := f.unsentArgs()
		f.mu.Unlock()
		if closed {
			return frontier.Item{}, frontier.ErrClosed
		}
		res, counts, err := f.call(ctx, nextScript, append([]any{f.callID(), "", f.waitWindow()}, delays...)...)
		if err != nil {
			if f.closeCtx.Err() != nil {
				return frontier.Item{}, frontier.ErrClosed
			}
			return frontier.Item{}, fmt.Errorf("redisfrontier: next: %w", err)
		}
		f.sent(delays)
		if len(res) == 3 && res[0] == "item" {
			rec, _ := res[1].(string)
			it, err := decodeRecord(rec)
			if err != nil {
				return frontier.Item{}, fmt.Errorf("redisfrontier: next: %w", err)
			}
			f.mu.Lock()
			f.held[it.URL] = it
			f.mu.Unlock()
			return it, nil
		}
		if len(res) != 2 || res[0] != "wait" {
			return frontier.Item{}, fmt.Errorf("redisfrontier: next: %w: reply %v", errCorrupt, res)
		}
		if counts.Pending == 0 && counts.InFlight == 0 {
			return frontier.Item{}, frontier.ErrDrained
		}
		wait := f.poll
		if ms, err := strconv.ParseInt(fmt.Sprint(res[1]), 10, 64); err == nil && ms >= 0 {
			wait = min(wait, time.Duration(ms)*time.Millisecond)
		}
		if err := sleep(ctx, wake, wait); err != nil {
			if f.closeCtx.Err() != nil {
				return frontier.Item{}, frontier.ErrClosed
			}
			return frontier.Item{}, err
		}
	}
}

// Add queues the items never seen in the crawl (one script, one round
// trip). See frontier.Queue.
func (f *Frontier) Add(ctx context.Context, items ...frontier.Item) (int, error) {
	args, err := linkArgs(items)
	if err != nil || len(args) == 0 {
		return 0, err
	}
	res, _, err := f.call(ctx, addScript, append([]any{f.callID()}, args...)...)
	if err != nil {
		return 0, fmt.Errorf("redisfrontier: add: %w", err)
	}
	f.wakeLocal()
	n, _ := res[0].(int64)
	return int(n), nil
}

// RetryFailed queues again, with their attempts reset, those of items
// whose URLs the crawl recorded as failed (by any worker), and returns how
// many; the others (unknown, pending, in flight, done) are left as they
// are. A worker calls it with the failed URLs its data directory recorded
// (crawl --retry-failed).
func (f *Frontier) RetryFailed(ctx context.Context, items ...frontier.Item) (int, error) {
	for i := range items {
		items[i].Attempts, items[i].LastError = 0, ""
	}
	args, err := linkArgs(items)
	if err != nil || len(args) == 0 {
		return 0, err
	}
	res, _, err := f.call(ctx, retryFailedScript, append([]any{f.callID()}, args...)...)
	if err != nil {
		return 0, fmt.Errorf("redisfrontier: retry failed: %w", err)
	}
	f.wakeLocal()
	n, _ := res[0].(int64)
	return int(n), nil
}

// Finish marks it done and queues links in one script (one round trip).
// See frontier.Queue. If this worker's lease expired meanwhile but no
// other worker took the URL, Finish still completes it; if another worker
// did, it returns an error wrapping frontier.ErrNotInFlight and the other
// worker's fetch counts.
func (f *Frontier) Finish(ctx context.Context, it frontier.Item, outcome string, links []frontier.Item) error {
	args, err := linkArgs(links)
	if err != nil {
		return err
	}
	args = append([]any{it.URL, "d:" + outcome, f.heldArg(it.URL), "done"}, args...)
	return f.complete(ctx, "finish", finishScript, it.URL, args)
}

// Done is Finish without links.
func (f *Frontier) Done(ctx context.Context, it frontier.Item, outcome string) error {
	return f.Finish(ctx, it, outcome, nil)
}

// Fail records it as failed with reason. See frontier.Queue.
func (f *Frontier) Fail(ctx context.Context, it frontier.Item, reason string) error {
	args := []any{it.URL, "f:" + reason, f.heldArg(it.URL), "failed"}
	return f.complete(ctx, "fail", finishScript, it.URL, args)
}

// Retry puts it back to pending, due after after. See frontier.Queue.
func (f *Frontier) Retry(ctx context.Context, it frontier.Item, after time.Duration, reason string) error {
	args := []any{it.URL, max(after, 0).Milliseconds(), reason, f.heldArg(it.URL)}
	return f.complete(ctx, "retry", retryScript, it.URL, args)
}

// FinishWith is Finish sent in one pipelined round trip with the
// commands stage queues on pipe ahead of the finish script (for example
// redisindex.Index.ConfirmOn): they run before it, each on its own, not
// as one transaction. stage is called again for each attempt, since the
// whole pipeline is sent again while Redis is unreachable: its commands
// must be safe to run twice, and the caller reads the replies of the
// last attempt's. The pipeline goes through Client, on which the
// caller's commands must be meant to run.
func (f *Frontier) FinishWith(ctx context.Context, it frontier.Item, outcome string, links []frontier.Item, stage func(pipe redis.Pipeliner)) error {
	return f.finishWith(ctx, it, outcome, links, stage, nil)
}

// finishWith is FinishWith with after's commands queued after the finish
// script (FinishNext's next script), sent and retried with it.
func (f *Frontier) finishWith(ctx context.Context, it frontier.Item, outcome string, links []frontier.Item, stage, after func(pipe redis.Pipeliner)) error {
	args, err := linkArgs(links)
	if err != nil {
		return err
	}
	args = append([]any{it.URL, "d:" + outcome, f.heldArg(it.URL), "done"}, args...)
	var fin *redis.Cmd
	err = f.retry(ctx, func() error {
		pipe := f.rdb.Pipeline()
		stage(pipe)
		fin = finishScript.EvalSha(ctx, pipe, f.keys, append(f.common(), args...)...)
		if after != nil {
			after(pipe)
		}
		_, err := pipe.Exec(ctx)
		if err != nil && redisconn.Transient(err) {
			return err
		}
		return nil // the staged commands' errors are the caller's
	})
	if err == nil {
		err = fin.Err()
	}
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		return f.complete(ctx, "finish", finishScript, it.URL, args) // loads the script
	}
	if err != nil {
		return fmt.Errorf("redisfrontier: finish %q: %w", it.URL, f.lost(err))
	}
	res, err := fin.Slice()
	if err == nil {
		res, _, err = f.reply(res)
	}
	return f.completed("finish", it.URL, res, err)
}

// Client returns the client the frontier runs on (see FinishWith).
func (f *Frontier) Client() redis.UniversalClient { return f.rdb }

func (f *Frontier) complete(ctx context.Context, op string, s *redis.Script, url string, args []any) error {
	res, _, err := f.call(ctx, s, args...)
	return f.completed(op, url, res, err)
}

// completed is a completion's answer, given its script's reply res (counts
// removed) or error err.
func (f *Frontier) completed(op, url string, res []any, err error) error {
	if err != nil {
		return fmt.Errorf("redisfrontier: %s %q: %w", op, url, err)
	}
	f.mu.Lock()
	_, held := f.held[url]
	delete(f.held, url)
	f.signal()
	f.mu.Unlock()
	if len(res) == 2 && res[0] == "notinflight" {
		why := fmt.Sprint(res[1])
		if !held {
			why = "not handed out to this worker"
		}
		return fmt.Errorf("redisfrontier: %s: %w: %q: %s", op, frontier.ErrNotInFlight, url, why)
	}
	return nil
}

// Alias records url as done with outcome unless it was seen. See
// frontier.Queue.
func (f *Frontier) Alias(ctx context.Context, url, outcome string) (seen bool, err error) {
	if err := frontier.Validate(frontier.Item{URL: url}); err != nil {
		return false, err
	}
	res, _, err := f.call(ctx, aliasScript, url, "d:"+outcome, f.callID())
	if err != nil {
		return false, fmt.Errorf("redisfrontier: alias %q: %w", url, err)
	}
	n, _ := res[0].(int64)
	return n == 1, nil
}

// linkArgs validates items and returns their (url, host, record) triples.
func linkArgs(items []frontier.Item) ([]any, error) {
	args := make([]any, 0, 3*len(items))
	for _, it := range items {
		if err := frontier.Validate(it); err != nil {
			return nil, err
		}
		rec, err := encodeRecord(it)
		if err != nil {
			return nil, err
		}
		args = append(args, it.URL, frontier.HostKey(it.URL), rec)
	}
	return args, nil
}

func (f *Frontier) heldArg(url string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.held[url]; ok {
		return "1"
	}
	return "0"
}

func (f *Frontier) wakeLocal() {
	f.mu.Lock()
	f.signal()
	f.mu.Unlock()
}

// unsentArgs returns the SetHostDelay pairs not yet in Redis as script
// arguments, count first. f.mu must be held.
func (f *Frontier) unsentArgs() []any {
	args := make([]any, 1, 1+2*len(f.unsent))
	args[0] = len(f.unsent)
	for h, d := range f.unsent {
		args = append(args, h, d.Milliseconds())
	}
	return args
}

// sent forgets the pairs of args that Redis now has, unless SetHostDelay
// changed them meanwhile.
func (f *Frontier) sent(args []any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := 1; i+1 < len(args); i += 2 {
		h := args[i].(string)
		if d, ok := f.unsent[h]; ok && d.Milliseconds() == args[i+1].(int64) {
			delete(f.unsent, h)
		}
	}
}

// common returns the arguments every script starts with (see scripts.go).
func (f *Frontier) common() []any {
	now := ""
	if f.now != nil {
		now = strconv.FormatInt(f.now().UnixMilli(), 10)
	}
	return []any{now, f.worker, f.ttl.Milliseconds(), f.limit, f.delay.Milliseconds()}
}

// call runs s with the common arguments and extra, retrying while Redis is
// unreachable, and returns its result without the counts, and the counts,
// which also become Stats.
func (f *Frontier) call(ctx context.Context, s *redis.Script, extra ...any) ([]any, frontier.Stats, error) {
	var res []any
	err := f.retry(ctx, func() error {
		var err error
		res, err = s.Run(ctx, f.rdb, f.keys, append(f.common(), extra...)...).Slice()
		return err
	})
	if err != nil {
		return nil, frontier.Stats{}, f.lost(err)
	}
	return f.reply(res)
}

// reply splits a script's reply res into its result and the counts, which
// also become Stats.
func (f *Frontier) reply(res []any) ([]any, frontier.Stats, error) {
	if len(res) < 5 {
		return nil, frontier.Stats{}, fmt.Errorf("%w: script reply %v", errCorrupt, res)
	}
	var n [5]int
	for i, v := range res[len(res)-5:] {
		x, ok := v.(int64)
		if !ok {
			return nil, frontier.Stats{}, fmt.Errorf("%w: script reply %v", errCorrupt, res)
		}
		n[i] = int(x)
	}
	st := frontier.Stats{Pending: n[0], InFlight: n[1], Done: n[2], Failed: n[3], Hosts: n[4]}
	f.mu.Lock()
	f.stats = st
	f.mu.Unlock()
	return res[:len(res)-5], st, nil
}

// retry runs fn until it succeeds, fails for a reason other than an
// unreachable or restarting server, or ctx ends.
func (f *Frontier) retry(ctx context.Context, fn func() error) error {
	backoff := redisconn.MinBackoff
	for {
		err := fn()
		if err == nil {
			return nil
		}
		if cerr := ctx.Err(); cerr != nil {
			if errors.Is(err, cerr) {
				return err
			}
			return fmt.Errorf("%w (redis at %s: %v)", cerr, f.addr, err)
		}
		if !redisconn.Transient(err) {
			return err
		}
		if serr := sleep(ctx, nil, backoff); serr != nil {
			return fmt.Errorf("%w (redis at %s: %v)", serr, f.addr, err)
		}
		backoff = min(2*backoff, redisconn.MaxBackoff)
	}
}

// sleep waits for d, wake (if not nil) or ctx.
func sleep(ctx context.Context, wake <-chan struct{}, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-wake:
	case <-t.C:
	}
	return nil
}

// heartbeat renews the worker's lease every LeaseTTL/3 (every second after
// a failure) until ctx ends.
func (f *Frontier) heartbeat(ctx context.Context) {
	defer close(f.beatDone)
	every := f.ttl / 3
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		next := every
		if err := f.renew(ctx); err != nil && ctx.Err() == nil {
			next = min(every, time.Second)
			if f.onError != nil {
				f.onError(fmt.Errorf("redisfrontier: renew lease of worker %s at %s: %w", f.worker, f.addr, err))
			}
		}
		t.Reset(next)
	}
}

// renew runs the renewal script once: it extends this worker's lease,
// writes pending SetHostDelays, and returns to the queue URLs leased to
// this worker for over a lease TTL that it does not hold (a Next whose
// reply was lost).
func (f *Frontier) renew(ctx context.Context) error {
	f.mu.Lock()
	args := append([]any{f.ttl.Milliseconds()}, f.unsentArgs()...)
	for url := range f.held {
		args = append(args, url)
	}
	f.mu.Unlock()
	res, err := renewScript.Run(ctx, f.rdb, f.keys, append(f.common(), args...)...).Slice()
	if err != nil {
		return f.lost(err)
	}
	if len(res) < 6 {
		return fmt.Errorf("%w: renew reply %v", errCorrupt, res)
	}
	f.sent(args[1:])
	return nil
}
