package redisfrontier

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/internal/redistest"
)

// pipeCount counts a client's pipelines and single commands, but not
// those that set up a new connection (HELLO, CLIENT SETINFO).
type pipeCount struct{ cmds, pipes atomic.Int64 }

func (h *pipeCount) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *pipeCount) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() != "hello" {
			h.cmds.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (h *pipeCount) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if cmds[0].Name() != "client" {
			h.pipes.Add(1)
		}
		return next(ctx, cmds)
	}
}

// FinishWith finishes a URL, links and all, with the caller's command in
// the same round trip, run before the finish; a URL not in flight is
// refused as Finish refuses it; after the server lost its scripts it
// still finishes.
func TestFinishWith(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Client(t, sharedAddr)
	name := newName(t)
	f := open(t, rdb, fast(name))
	if _, err := f.Add(ctx, frontier.Item{URL: u("a", "1")}, frontier.Item{URL: u("a", "2")}); err != nil {
		t.Fatal(err)
	}
	h := &pipeCount{}
	rdb.AddHook(h)
	it, err := f.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h.cmds.Store(0)
	var set *redis.StatusCmd
	err = f.FinishWith(ctx, it, "stored", []frontier.Item{{URL: u("a", "3"), Depth: 1}}, func(pipe redis.Pipeliner) {
		set = pipe.Set(ctx, "{"+name+"}:mine", "1", 0)
	})
	if err != nil {
		t.Fatalf("FinishWith: %v", err)
	}
	if c, p := h.cmds.Load(), h.pipes.Load(); c != 0 || p != 1 {
		t.Errorf("FinishWith sent %d commands and %d pipelines, want one pipeline", c, p)
	}
	if err := set.Err(); err != nil {
		t.Errorf("the staged command: %v", err)
	}
	if st, err := f.State(ctx, it.URL); err != nil || st != "done:stored" {
		t.Errorf("State(%s) = %q, %v, want done:stored", it.URL, st, err)
	}
	if st, err := f.State(ctx, u("a", "3")); err != nil || st != "pending" {
		t.Errorf("State of the link = %q, %v, want pending", st, err)
	}
	err = f.FinishWith(ctx, it, "stored", nil, func(redis.Pipeliner) {})
	if !errors.Is(err, frontier.ErrNotInFlight) {
		t.Errorf("FinishWith of a URL finished already = %v, want ErrNotInFlight", err)
	}

	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	it, err = f.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.FinishWith(ctx, it, "stored", nil, func(redis.Pipeliner) {}); err != nil {
		t.Fatalf("FinishWith after SCRIPT FLUSH: %v", err)
	}
	if st, err := f.State(ctx, it.URL); err != nil || st != "done:stored" {
		t.Errorf("State(%s) after SCRIPT FLUSH = %q, %v, want done:stored", it.URL, st, err)
	}
}
