package redisfrontier

import (
	"context"
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/frontier"
)

// FinishNext finishes a URL and hands out the next in one round trip, the
// next possibly one of the links it queued; with nothing ready it hands
// out none and Next then reports the crawl drained; a finish refused (the
// URL finished already) still hands out the next URL, held by the worker.
func TestFinishNext(t *testing.T) {
	ctx := context.Background()
	rdb := client(t, sharedAddr)
	f := open(t, rdb, fast(newName(t)))
	if _, err := f.Add(ctx, frontier.Item{URL: u("a", "1")}); err != nil {
		t.Fatal(err)
	}
	it, err := f.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h := &pipeCount{}
	rdb.AddHook(h)
	staged := 0
	next, ok, ferr, nerr := f.FinishNext(ctx, it, "stored", []frontier.Item{{URL: u("a", "2"), Depth: 1}}, func(redis.Pipeliner) { staged++ })
	if ferr != nil || nerr != nil || !ok || next.URL != u("a", "2") || next.Depth != 1 {
		t.Fatalf("FinishNext = %+v, %v, %v, %v, want the link %s", next, ok, ferr, nerr, u("a", "2"))
	}
	if c, p := h.cmds.Load(), h.pipes.Load(); c != 0 || p != 1 || staged != 1 {
		t.Errorf("FinishNext sent %d commands and %d pipelines, staged %d times, want one pipeline, staged once", c, p, staged)
	}
	if st, err := f.State(ctx, it.URL); err != nil || st != "done:stored" {
		t.Errorf("State(%s) = %q, %v, want done:stored", it.URL, st, err)
	}
	if st, err := f.State(ctx, next.URL); err != nil || st != "inflight" {
		t.Errorf("State(%s) = %q, %v, want inflight", next.URL, st, err)
	}
	// A finish refused still hands out the next URL, which the worker holds.
	if _, err := f.Add(ctx, frontier.Item{URL: u("b", "1")}); err != nil {
		t.Fatal(err)
	}
	got, ok, ferr, nerr := f.FinishNext(ctx, it, "stored", nil, func(redis.Pipeliner) {})
	if !errors.Is(ferr, frontier.ErrNotInFlight) || nerr != nil || !ok || got.URL != u("b", "1") {
		t.Fatalf("FinishNext of a URL finished already = %+v, %v, %v, %v, want ErrNotInFlight and %s", got, ok, ferr, nerr, u("b", "1"))
	}
	if err := f.Finish(ctx, got, "stored", nil); err != nil {
		t.Fatalf("Finish of the URL handed out with a refused finish: %v", err)
	}
	// Nothing ready: none handed out; Next says drained once it is finished.
	if n, ok, ferr, nerr := f.FinishNext(ctx, next, "stored", nil, func(redis.Pipeliner) {}); ok || ferr != nil || nerr != nil {
		t.Fatalf("FinishNext of the last URL = %+v, %v, %v, %v, want none handed out", n, ok, ferr, nerr)
	}
	if _, err := f.Next(ctx); !errors.Is(err, frontier.ErrDrained) {
		t.Fatalf("Next after the last FinishNext = %v, want ErrDrained", err)
	}
}
