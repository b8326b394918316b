package redisfrontier

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/frontier/frontiertest"
	"github.com/simcrawl/simcrawl/internal/redistest"
)

// After an outage longer than half a lease (Redis restarted from its
// append-only file), the first script renews every worker's lease, so a
// worker still fetching keeps its URL and completes it.
func TestRestartKeepsLeases(t *testing.T) {
	srv := redistest.Start(t, redistest.WithArgs("--appendfsync", "always"))
	clock := frontiertest.NewClock()
	name := newName(t)
	o := Options{Options: frontier.Options{PerHostInFlight: 1, PerHostDelay: -1, Now: clock.Now}, Name: name, LeaseTTL: leaseTTL}
	a := open(t, redistest.Client(t, srv.Addr()), o)
	b := open(t, redistest.Client(t, srv.Addr()), o)
	ctx := context.Background()
	x := u("a.example", "x")
	if _, err := a.Add(ctx, frontier.Item{URL: x, Seed: true}); err != nil {
		t.Fatal(err)
	}
	it := frontiertest.MustNext(t, a)
	srv.Restart()
	clock.Advance(2 * leaseTTL) // the outage, as the crawl's clock sees it
	frontiertest.Blocked(t, b)  // must not take x from a
	if err := a.Done(ctx, it, "stored"); err != nil {
		t.Fatalf("Done after the restart = %v", err)
	}
	if _, err := b.Next(ctx); !errors.Is(err, frontier.ErrDrained) {
		t.Errorf("Next after the last Done = %v, want ErrDrained", err)
	}
}

// A Redis that lost the crawl's keys (restarted without its append-only
// file, flushed, or keys evicted) must not look like a finished crawl:
// Next fails instead of returning ErrDrained, and Add does not start a
// new crawl in the namespace without its meta hash.
func TestLostNamespaceIsAnError(t *testing.T) {
	srv := redistest.Start(t)
	rdb := redistest.Client(t, srv.Addr())
	ctx := context.Background()
	f, err := Open(ctx, rdb, fast(newName(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
		f.stopBeat()
		<-f.beatDone
	}()
	if _, err := f.Add(ctx, frontier.Item{URL: u("a.example", "1"), Seed: true}); err != nil {
		t.Fatal(err)
	}
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := f.Next(ctx); !errors.Is(err, ErrLost) {
		t.Errorf("Next after the crawl's keys were lost = %v, want ErrLost", err)
	}
	if _, err := f.Add(ctx, frontier.Item{URL: u("a.example", "2")}); !errors.Is(err, ErrLost) {
		t.Errorf("Add after the crawl's keys were lost = %v, want ErrLost", err)
	}
	if _, err := f.ClaimPage(ctx, 10); !errors.Is(err, ErrLost) {
		t.Errorf("ClaimPage after the crawl's keys were lost = %v, want ErrLost (the budget would start over)", err)
	}
	if n, err := rdb.DBSize(ctx).Result(); err != nil || n != 0 {
		t.Errorf("keys after the refused calls = %d, %v; want none written", n, err)
	}
}

// Next waits through an outage rather than failing: while the server is
// down it ends only with its context, and after the restart it returns
// the URL.
func TestNextWaitsThroughOutage(t *testing.T) {
	srv := redistest.Start(t, redistest.WithArgs("--appendfsync", "always"))
	f := open(t, redistest.Client(t, srv.Addr()), fast(newName(t)))
	ctx := context.Background()
	x := u("a.example", "x")
	if _, err := f.Add(ctx, frontier.Item{URL: x, Seed: true}); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	down, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if it, err := f.Next(down); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next while redis is down = %q, %v; want it to wait until its context ends", it.URL, err)
	}
	srv.Restart()
	if it := frontiertest.MustNext(t, f); it.URL != x {
		t.Fatalf("Next after the restart = %s, want %s", it.URL, x)
	}
}
