package redisfrontier

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/internal/redistest"
)

// FinishNext finishes a URL and hands out the next in one round trip, the
// next possibly one of the links it queued; with nothing ready it hands
// out none and Next then reports the crawl drained; a finish refused (the
// URL finished already) still hands out the next URL, held by the worker.
func TestFinishNext(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Client(t, sharedAddr)
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

// A worker finishing a URL of a host at its in-flight limit leaves the
// slot it frees to a worker that waits for one, rather than take it in
// the same step: a worker joining a crawl of one busy host gets URLs.
func TestFinishNextYieldsToAWaitingWorker(t *testing.T) {
	ctx := context.Background()
	name := newName(t)
	o := Options{Options: frontier.Options{PerHostInFlight: 1, PerHostDelay: -1}, Name: name, Poll: 20 * time.Millisecond}
	oa, ob := o, o
	oa.Worker, ob.Worker = "a", "b"
	a, b := open(t, redistest.Client(t, sharedAddr), oa), open(t, redistest.Client(t, sharedAddr), ob)
	if _, err := a.Add(ctx, frontier.Item{URL: u("h", "1")}, frontier.Item{URL: u("h", "2")}); err != nil {
		t.Fatal(err)
	}
	first, err := a.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if it, err := b.Next(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next of worker b while the host is at its limit = %+v, %v, want to wait", it, err)
	}
	if it, ok, ferr, nerr := a.FinishNext(ctx, first, "stored", nil, func(redis.Pipeliner) {}); ok || ferr != nil || nerr != nil {
		t.Fatalf("FinishNext of worker a while b waits = %+v, %v, %v, %v, want the slot left to b", it, ok, ferr, nerr)
	}
	it, err := b.Next(ctx)
	if err != nil || it.URL != u("h", "2") {
		t.Fatalf("Next of worker b = %+v, %v, want %s", it, err, u("h", "2"))
	}
}
