package redisfrontier

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/frontier"
)

// rtHook counts round trips: each command or pipeline sent.
type rtHook struct{ n atomic.Int64 }

func (h *rtHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *rtHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}
func (h *rtHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmds)
	}
}

// Open loads every script into the server's cache, so that Add, Next and
// Finish are one EVALSHA each: one round trip.
func TestOpenLoadsScripts(t *testing.T) {
	ctx := context.Background()
	rdb := client(t, sharedAddr)
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	f := open(t, rdb, fast(newName(t)))
	for _, s := range scripts {
		ok, err := s.Exists(ctx, rdb).Result()
		if err != nil || len(ok) != 1 || !ok[0] {
			t.Errorf("script %q not in the server's cache after Open: %v %v", s.Hash(), ok, err)
		}
	}
	h := &rtHook{}
	rdb.AddHook(h)
	if _, err := f.Add(ctx, frontier.Item{URL: u("a.test", ""), Seed: true}); err != nil {
		t.Fatal(err)
	}
	it, err := f.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Done(ctx, it, "stored"); err != nil {
		t.Fatal(err)
	}
	if n := h.n.Load(); n != 3 {
		t.Errorf("Add, Next and Done took %d round trips, want 3", n)
	}
}
