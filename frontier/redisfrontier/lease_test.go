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

// leaseTTL is the lease of the workers these tests open on a shared fake
// clock: long in real time, so the renewal goroutine never runs during a
// test, and expired by advancing the clock.
const leaseTTL = time.Hour

// workers opens n workers of one new crawl on clock.
func workers(t *testing.T, clock *frontiertest.Clock, fo frontier.Options, n int) []*Frontier {
	t.Helper()
	rdb := redistest.Client(t, sharedAddr)
	name := newName(t)
	fo.Now = clock.Now
	var ws []*Frontier
	for range n {
		ws = append(ws, open(t, rdb, Options{Options: fo, Name: name, LeaseTTL: leaseTTL}))
	}
	return ws
}

// die stops w's renewals as a killed process would: it makes no more calls.
func die(w *Frontier) {
	w.stopBeat()
	<-w.beatDone
}

// pass advances clock by d in steps of a quarter lease, calling alive's
// renewal at each, as its heartbeat does: the crawl's clock never jumps by
// more than half a lease, which the scripts would take for an outage.
func pass(t *testing.T, clock *frontiertest.Clock, d time.Duration, alive *Frontier) {
	t.Helper()
	for step := leaseTTL / 4; d > 0; d -= step {
		clock.Advance(min(step, d))
		if err := alive.renew(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// The URLs of a worker that dies go back to the queue when its lease
// expires, and the other worker takes them; the crawl drains only then.
func TestLeaseReclaim(t *testing.T) {
	clock := frontiertest.NewClock()
	ws := workers(t, clock, frontier.Options{PerHostInFlight: 1, PerHostDelay: -1}, 2)
	a, b := ws[0], ws[1]
	ctx := context.Background()
	x := u("a.example", "x")
	if _, err := a.Add(ctx, frontier.Item{URL: x, Seed: true}); err != nil {
		t.Fatal(err)
	}
	if it := frontiertest.MustNext(t, a); it.URL != x {
		t.Fatalf("Next = %s", it.URL)
	}
	die(a)
	frontiertest.Blocked(t, b) // in flight under a live lease: not drained
	pass(t, clock, leaseTTL-time.Millisecond, b)
	frontiertest.Blocked(t, b)
	pass(t, clock, 2*time.Millisecond, b)
	it := frontiertest.MustNext(t, b)
	if it.URL != x {
		t.Fatalf("Next after the lease expired = %s, want %s", it.URL, x)
	}
	if err := a.Done(ctx, frontier.Item{URL: x}, "stored"); !errors.Is(err, frontier.ErrNotInFlight) {
		t.Errorf("Done by the worker whose lease was taken = %v, want ErrNotInFlight", err)
	}
	if err := b.Done(ctx, it, "stored"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Next(ctx); !errors.Is(err, frontier.ErrDrained) {
		t.Errorf("Next after the last Done = %v, want ErrDrained", err)
	}
	if s, err := b.Counts(ctx); err != nil || s != (frontier.Stats{Done: 1}) {
		t.Errorf("Counts = %+v, %v; want 1 done", s, err)
	}
}

// A worker whose lease expired while no other worker took its URL still
// completes it, and the queue's counts stay right: the crawl drains.
func TestLateFinishAccepted(t *testing.T) {
	clock := frontiertest.NewClock()
	// The host's delay outlasts the lease, so the returned URL is not
	// handed out again before the late Finish.
	ws := workers(t, clock, frontier.Options{PerHostInFlight: 1, PerHostDelay: 3 * leaseTTL}, 2)
	a, b := ws[0], ws[1]
	ctx := context.Background()
	x, link := u("a.example", "x"), u("b.example", "y")
	if _, err := a.Add(ctx, frontier.Item{URL: x, Seed: true}); err != nil {
		t.Fatal(err)
	}
	it := frontiertest.MustNext(t, a)
	die(a)
	pass(t, clock, leaseTTL+time.Millisecond, b)
	frontiertest.Blocked(t, b) // reclaims a's lease: x is pending, its host waits
	if st, err := b.State(ctx, x); err != nil || st != "pending" {
		t.Fatalf("State of the reclaimed URL = %q, %v; want pending", st, err)
	}
	if err := a.Finish(ctx, it, "stored", []frontier.Item{{URL: link, Depth: 1, Source: x}}); err != nil {
		t.Fatalf("late Finish = %v, want it accepted", err)
	}
	if st, err := b.State(ctx, x); err != nil || st != "done:stored" {
		t.Errorf("State after the late Finish = %q, %v; want done:stored", st, err)
	}
	got := frontiertest.MustNext(t, b)
	if got.URL != link {
		t.Fatalf("Next = %s, want the link %s", got.URL, link)
	}
	if err := b.Done(ctx, got, "stored"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Next(ctx); !errors.Is(err, frontier.ErrDrained) {
		t.Errorf("Next after the last Done = %v, want ErrDrained", err)
	}
	if s, err := b.Counts(ctx); err != nil || s.Pending != 0 || s.InFlight != 0 || s.Done != 2 {
		t.Errorf("Counts = %+v, %v; want 2 done", s, err)
	}
}

// A Next abandoned after its script ran (ctx ended, reply never read)
// leaves a URL leased to a worker that does not hold it: the renewal
// returns it once it is older than a lease.
func TestAbandonedNextReturns(t *testing.T) {
	clock := frontiertest.NewClock()
	a := workers(t, clock, frontier.Options{PerHostInFlight: 1, PerHostDelay: -1}, 1)[0]
	ctx := context.Background()
	x := u("a.example", "x")
	if _, err := a.Add(ctx, frontier.Item{URL: x, Seed: true}); err != nil {
		t.Fatal(err)
	}
	// The script runs, the reply is dropped: what an abandoned Next leaves.
	if _, _, err := a.call(ctx, nextScript, "abandoned", "", a.waitWindow(), 0); err != nil {
		t.Fatal(err)
	}
	frontiertest.Blocked(t, a)
	pass(t, clock, leaseTTL-time.Millisecond, a)
	frontiertest.Blocked(t, a)
	pass(t, clock, 2*time.Millisecond, a)
	if it := frontiertest.MustNext(t, a); it.URL != x {
		t.Fatalf("Next = %s, want %s", it.URL, x)
	}
}

// Politeness holds across workers: the per-host in-flight limit and delay
// count every worker's requests, and a SetHostDelay of one worker reaches
// the others with its next call.
func TestPolitenessAcrossWorkers(t *testing.T) {
	clock := frontiertest.NewClock()
	const delay = time.Second
	ws := workers(t, clock, frontier.Options{PerHostInFlight: 1, PerHostDelay: delay}, 2)
	a, b := ws[0], ws[1]
	ctx := context.Background()
	var items []frontier.Item
	for _, p := range []string{"1", "2", "3"} {
		items = append(items, frontier.Item{URL: u("a.example", p), Seed: true})
	}
	if _, err := a.Add(ctx, items...); err != nil {
		t.Fatal(err)
	}
	first := frontiertest.MustNext(t, a)
	frontiertest.Blocked(t, b) // a holds the host's one slot
	if err := a.Done(ctx, first, "stored"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(delay - time.Millisecond)
	frontiertest.Blocked(t, b) // the slot is free, the delay is not over
	clock.Advance(time.Millisecond)
	second := frontiertest.MustNext(t, b)
	if err := b.Done(ctx, second, "stored"); err != nil {
		t.Fatal(err)
	}
	// a raises the host's delay; b keeps it once a's next call carried it.
	a.SetHostDelay(frontier.HostKey(second.URL), 10*delay)
	if err := a.renew(ctx); err != nil {
		t.Fatal(err)
	}
	clock.Advance(delay)
	frontiertest.Blocked(t, b)
	clock.Advance(9 * delay)
	if it := frontiertest.MustNext(t, b); it.URL != items[2].URL {
		t.Errorf("Next = %s, want %s", it.URL, items[2].URL)
	}
}
