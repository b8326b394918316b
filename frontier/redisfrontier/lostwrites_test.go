package redisfrontier

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/frontier/frontiertest"
	"github.com/simcrawl/simcrawl/internal/redistest"
)

// snapshot saves every key of crawl name and returns a function that puts
// them back as they were, deleting keys made since: what a redis-server
// that lost its last writes (appendfsync everysec, a crash) holds after
// its restart. Each script's writes are lost whole or kept whole, as the
// snapshot is taken between scripts.
func snapshot(t *testing.T, rdb *redis.Client, name string) (restore func()) {
	t.Helper()
	ctx := context.Background()
	pattern := "simcrawl:{" + name + "}:*"
	type saved struct {
		dump string
		ttl  time.Duration
	}
	keys, err := rdb.Keys(ctx, pattern).Result()
	if err != nil {
		t.Fatal(err)
	}
	before := map[string]saved{}
	for _, k := range keys {
		d, err := rdb.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		ttl, err := rdb.PTTL(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl < 0 {
			ttl = 0
		}
		before[k] = saved{d, ttl}
	}
	return func() {
		t.Helper()
		now, err := rdb.Keys(ctx, pattern).Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(now) > 0 {
			if err := rdb.Del(ctx, now...).Err(); err != nil {
				t.Fatal(err)
			}
		}
		for k, s := range before {
			if err := rdb.Restore(ctx, k, s.ttl, s.dump).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A Finish whose writes the server lost (done and links together) leaves
// the URL leased to a worker that no longer holds it: its renewal returns
// it once the lease is older than LeaseTTL, it is fetched again, and its
// links are queued by the second Finish. Nothing is lost.
func TestLostFinishRefetched(t *testing.T) {
	clock := frontiertest.NewClock()
	rdb := redistest.Client(t, sharedAddr)
	name := newName(t)
	o := Options{Options: frontier.Options{PerHostInFlight: 1, PerHostDelay: -1, Now: clock.Now}, Name: name, LeaseTTL: leaseTTL}
	a, b := open(t, rdb, o), open(t, rdb, o)
	ctx := context.Background()
	x, y := u("a.example", "x"), u("b.example", "y")
	if _, err := a.Add(ctx, frontier.Item{URL: x, Seed: true}); err != nil {
		t.Fatal(err)
	}
	it := frontiertest.MustNext(t, a)
	restore := snapshot(t, rdb, name)
	if err := a.Finish(ctx, it, "stored", []frontier.Item{{URL: y, Depth: 1, Source: x}}); err != nil {
		t.Fatal(err)
	}
	restore() // the server lost the Finish
	frontiertest.Blocked(t, b)
	pass(t, clock, leaseTTL+time.Millisecond, a)
	again := frontiertest.MustNext(t, b)
	if again.URL != x {
		t.Fatalf("Next after the lost Finish = %s, want %s fetched again", again.URL, x)
	}
	if err := b.Finish(ctx, again, "stored", []frontier.Item{{URL: y, Depth: 1, Source: x}}); err != nil {
		t.Fatal(err)
	}
	link := frontiertest.MustNext(t, b)
	if link.URL != y {
		t.Fatalf("Next = %s, want the link %s", link.URL, y)
	}
	if err := b.Done(ctx, link, "stored"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Next(ctx); !errors.Is(err, frontier.ErrDrained) {
		t.Errorf("Next after the last Done = %v, want ErrDrained", err)
	}
	if s, err := b.Counts(ctx); err != nil || s != (frontier.Stats{Done: 2}) {
		t.Errorf("Counts = %+v, %v; want 2 done", s, err)
	}
}

// A Next whose writes the server lost leaves the URL pending while a
// worker fetches it. If another worker takes it, the first worker's Finish
// says ErrNotInFlight and the second's counts; if none does, the first
// worker's Finish completes it. Either way the counts stay right and the
// crawl drains.
func TestLostNext(t *testing.T) {
	for _, taken := range []bool{true, false} {
		t.Run(map[bool]string{true: "taken by another", false: "not taken"}[taken], func(t *testing.T) {
			clock := frontiertest.NewClock()
			rdb := redistest.Client(t, sharedAddr)
			name := newName(t)
			o := Options{Options: frontier.Options{PerHostInFlight: 1, PerHostDelay: -1, Now: clock.Now}, Name: name, LeaseTTL: leaseTTL}
			a, b := open(t, rdb, o), open(t, rdb, o)
			ctx := context.Background()
			x := u("a.example", "x")
			if _, err := a.Add(ctx, frontier.Item{URL: x, Seed: true}); err != nil {
				t.Fatal(err)
			}
			restore := snapshot(t, rdb, name)
			it := frontiertest.MustNext(t, a)
			restore() // the server lost the Next
			if taken {
				bt := frontiertest.MustNext(t, b)
				if bt.URL != x {
					t.Fatalf("b's Next = %s, want %s", bt.URL, x)
				}
				if err := a.Done(ctx, it, "stored"); !errors.Is(err, frontier.ErrNotInFlight) {
					t.Errorf("a's Done of a URL b now holds = %v, want ErrNotInFlight", err)
				}
				if err := b.Done(ctx, bt, "stored"); err != nil {
					t.Fatal(err)
				}
			} else if err := a.Done(ctx, it, "stored"); err != nil {
				t.Fatalf("a's Done after the lost Next = %v, want it accepted", err)
			}
			if _, err := b.Next(ctx); !errors.Is(err, frontier.ErrDrained) {
				t.Errorf("Next after the last Done = %v, want ErrDrained", err)
			}
			if s, err := b.Counts(ctx); err != nil || s != (frontier.Stats{Done: 1}) {
				t.Errorf("Counts = %+v, %v; want 1 done", s, err)
			}
		})
	}
}
