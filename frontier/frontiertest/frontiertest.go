// Package frontiertest is the contract test suite of frontier.Queue: every
// implementation (the bbolt *frontier.Frontier, frontier/redisfrontier) runs
// Run in its own tests, so they behave alike where the crawler can tell.
//
// The suite checks URL-seen, breadth-first order, the per-host in-flight
// limit and delay (with an injected clock, never by sleeping), Retry and
// Fail, Finish's atomicity, drained detection, Close and concurrent use.
// What only a shared queue can do (two workers, leases, a server restart)
// is tested beside that implementation.
package frontiertest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/simcrawl/simcrawl/frontier"
)

// Opener opens an empty queue with o for t and arranges its cleanup. o.Now
// is set when the test drives politeness with a Clock; the queue must then
// measure delays and retries with it.
type Opener func(t *testing.T, o frontier.Options) frontier.Queue

// Clock is a settable time source for frontier.Options.Now.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock at a fixed instant in 2026.
func NewClock() *Clock { return &Clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Run runs the contract suite against open.
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(*testing.T, Opener)
	}{
		{"URLSeen", testURLSeen},
		{"RejectsInvalidAtomically", testRejectsInvalid},
		{"BreadthFirst", testBreadthFirst},
		{"BreadthFirstWithinHost", testBreadthFirstWithinHost},
		{"PerHostInFlightLimit", testInFlightLimit},
		{"PerHostDelay", testDelay},
		{"Retry", testRetry},
		{"Fail", testFail},
		{"CompleteNotInFlight", testNotInFlight},
		{"FinishIsAtomic", testFinish},
		{"Alias", testAlias},
		{"Drained", testDrained},
		{"BlockedNextWakes", testBlockedNextWakes},
		{"Close", testClose},
		{"Concurrent", testConcurrent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open) })
	}
}

// U returns the URL http://host/path.
func U(host, path string) string { return "http://" + host + "/" + path }

func fast() frontier.Options { return frontier.Options{PerHostInFlight: 100, PerHostDelay: -1} }

func mustAdd(t *testing.T, q frontier.Queue, items ...frontier.Item) int {
	t.Helper()
	n, err := q.Add(context.Background(), items...)
	if err != nil {
		t.Fatalf("Add: %v", err)
	}
	return n
}

// MustNext calls Next with a generous timeout (a bound for a broken queue,
// not a speed requirement) and fails t on an error.
func MustNext(t *testing.T, q frontier.Queue) frontier.Item {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	it, err := q.Next(ctx)
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return it
}

// Blocked asserts that Next hands nothing out right now: it must still be
// waiting when a short context ends. A slow machine can only make this
// pass wrongly, never fail wrongly.
func Blocked(t *testing.T, q frontier.Queue) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	it, err := q.Next(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next = %q, %v; want it to block", it.URL, err)
	}
}

func state(t *testing.T, q frontier.Queue, url string) string {
	t.Helper()
	st, err := q.State(context.Background(), url)
	if err != nil {
		t.Fatalf("State(%s): %v", url, err)
	}
	return st
}

func done(t *testing.T, q frontier.Queue, it frontier.Item) {
	t.Helper()
	if err := q.Done(context.Background(), it, "stored"); err != nil {
		t.Fatalf("Done(%s): %v", it.URL, err)
	}
}

func testURLSeen(t *testing.T, open Opener) {
	q := open(t, fast())
	ctx := context.Background()
	a, b, c := U("a.example", "1"), U("a.example", "2"), U("b.example", "1")
	if n := mustAdd(t, q, frontier.Item{URL: a, Seed: true}, frontier.Item{URL: b}, frontier.Item{URL: a}); n != 2 {
		t.Errorf("Add = %d, want 2 (a repeat within one call is skipped)", n)
	}
	if n := mustAdd(t, q, frontier.Item{URL: a}, frontier.Item{URL: b}); n != 0 {
		t.Errorf("Add of pending URLs = %d, want 0", n)
	}
	it := MustNext(t, q)
	if it.URL != a || !it.Seed || it.Depth != 0 || it.Source != "" || it.Attempts != 0 {
		t.Errorf("Next = %+v, want the seed %s as added", it, a)
	}
	if n := mustAdd(t, q, frontier.Item{URL: a}); n != 0 {
		t.Errorf("Add of an in-flight URL = %d, want 0", n)
	}
	done(t, q, it)
	if n := mustAdd(t, q, frontier.Item{URL: a}); n != 0 {
		t.Errorf("Add of a done URL = %d, want 0", n)
	}
	it2 := MustNext(t, q)
	if err := q.Fail(ctx, it2, "status 404"); err != nil {
		t.Fatal(err)
	}
	if n := mustAdd(t, q, frontier.Item{URL: b}, frontier.Item{URL: c, Depth: 1, Source: a}); n != 1 {
		t.Errorf("Add of a failed URL and a new one = %d, want 1", n)
	}
	for url, want := range map[string]string{a: "done:stored", b: "failed:status 404", c: "pending", U("a.example", "never"): ""} {
		if got := state(t, q, url); got != want {
			t.Errorf("State(%s) = %q, want %q", url, got, want)
		}
	}
	if s := q.Stats(); s.Pending != 1 || s.InFlight != 0 || s.Done != 1 || s.Failed != 1 {
		t.Errorf("Stats = %+v, want 1 pending, 1 done, 1 failed", s)
	}
	got := MustNext(t, q)
	if got.URL != c || got.Depth != 1 || got.Source != a {
		t.Errorf("Next = %+v, want %s at depth 1 from %s", got, c, a)
	}
	if got := state(t, q, c); got != "inflight" {
		t.Errorf("State of a handed-out URL = %q, want inflight", got)
	}
}

func testRejectsInvalid(t *testing.T, open Opener) {
	q := open(t, fast())
	ok := U("ok.example", "")
	for _, bad := range []frontier.Item{
		{URL: "example.com/a"},
		{URL: "ftp://example.com/"},
		{URL: "http://example.com/a#frag"},
		{URL: "http:///a"},
		{URL: "http://example.com/", Depth: -1},
	} {
		_, err := q.Add(context.Background(), frontier.Item{URL: ok}, bad)
		if !errors.Is(err, frontier.ErrBadURL) {
			t.Errorf("Add(%+v) error %v, want ErrBadURL", bad, err)
		}
	}
	if got := state(t, q, ok); got != "" {
		t.Errorf("the valid item of a rejected batch has state %q, want none", got)
	}
	if _, err := q.Next(context.Background()); !errors.Is(err, frontier.ErrDrained) {
		t.Errorf("Next after rejected Adds: %v, want ErrDrained", err)
	}
}

func testBreadthFirst(t *testing.T, open Opener) {
	q := open(t, fast())
	// Added out of depth order, interleaving hosts.
	mustAdd(t, q,
		frontier.Item{URL: U("a.example", "d1-1"), Depth: 1},
		frontier.Item{URL: U("b.example", "d0-1"), Depth: 0},
		frontier.Item{URL: U("c.example", "d2-1"), Depth: 2},
		frontier.Item{URL: U("a.example", "d0-2"), Depth: 0},
	)
	mustAdd(t, q,
		frontier.Item{URL: U("b.example", "d1-2"), Depth: 1},
		frontier.Item{URL: U("c.example", "d0-3"), Depth: 0},
		frontier.Item{URL: U("a.example", "d1-3"), Depth: 1},
	)
	want := []string{
		U("b.example", "d0-1"), U("a.example", "d0-2"), U("c.example", "d0-3"),
		U("a.example", "d1-1"), U("b.example", "d1-2"), U("a.example", "d1-3"),
		U("c.example", "d2-1"),
	}
	for i, w := range want {
		if got := MustNext(t, q); got.URL != w {
			t.Errorf("Next #%d = %s, want %s", i, got.URL, w)
		}
	}
	if s := q.Stats(); s.InFlight != len(want) || s.Pending != 0 {
		t.Errorf("Stats = %+v, want all %d in flight", s, len(want))
	}
}

// One host at a time: a link found at depth 1 goes before the depth-2
// URLs queued earlier.
func testBreadthFirstWithinHost(t *testing.T, open Opener) {
	q := open(t, frontier.Options{PerHostInFlight: 1, PerHostDelay: -1})
	mustAdd(t, q, frontier.Item{URL: U("a.example", ""), Seed: true})
	seed := MustNext(t, q)
	links := []frontier.Item{
		{URL: U("a.example", "x"), Depth: 2},
		{URL: U("a.example", "y"), Depth: 2},
	}
	if err := q.Finish(context.Background(), seed, "stored", links); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, q, frontier.Item{URL: U("a.example", "z"), Depth: 1})
	for _, w := range []string{U("a.example", "z"), U("a.example", "x"), U("a.example", "y")} {
		it := MustNext(t, q)
		if it.URL != w {
			t.Errorf("Next = %s, want %s", it.URL, w)
		}
		Blocked(t, q) // one in flight per host
		done(t, q, it)
	}
}

func testInFlightLimit(t *testing.T, open Opener) {
	q := open(t, frontier.Options{PerHostInFlight: 2, PerHostDelay: -1})
	for i := range 4 {
		mustAdd(t, q, frontier.Item{URL: U("a.example", fmt.Sprint(i))})
	}
	mustAdd(t, q, frontier.Item{URL: U("b.example", "0")})
	first, second := MustNext(t, q), MustNext(t, q)
	if first.URL != U("a.example", "0") || second.URL != U("a.example", "1") {
		t.Fatalf("first two = %s, %s; want a.example 0 and 1 (FIFO)", first.URL, second.URL)
	}
	// a.example is full, so b.example goes next although it was added later.
	if got := MustNext(t, q); got.URL != U("b.example", "0") {
		t.Errorf("third Next = %s, want b.example (a.example at its limit)", got.URL)
	}
	Blocked(t, q)
	done(t, q, first)
	if got := MustNext(t, q); got.URL != U("a.example", "2") {
		t.Errorf("Next after Done = %s, want a.example/2", got.URL)
	}
	Blocked(t, q)
	if err := q.Retry(context.Background(), second, 0, "timeout"); err != nil {
		t.Fatal(err)
	}
	// Retry freed a slot; the retried URL keeps its depth but goes after
	// the URL that waited.
	if got := MustNext(t, q); got.URL != U("a.example", "3") {
		t.Errorf("Next after Retry = %s, want a.example/3", got.URL)
	}
}

func testDelay(t *testing.T, open Opener) {
	clk := NewClock()
	q := open(t, frontier.Options{PerHostInFlight: 5, PerHostDelay: 10 * time.Second, Now: clk.Now})
	for i := range 3 {
		mustAdd(t, q, frontier.Item{URL: U("a.example", fmt.Sprint(i))})
	}
	mustAdd(t, q, frontier.Item{URL: U("b.example", "0")})
	if got := MustNext(t, q); got.URL != U("a.example", "0") {
		t.Fatalf("Next = %s", got.URL)
	}
	if got := MustNext(t, q); got.URL != U("b.example", "0") {
		t.Fatalf("Next = %s, want b.example while a.example waits", got.URL)
	}
	Blocked(t, q)
	clk.Advance(9 * time.Second)
	Blocked(t, q)
	clk.Advance(time.Second)
	if got := MustNext(t, q); got.URL != U("a.example", "1") {
		t.Fatalf("Next after the delay = %s", got.URL)
	}
	// A longer Crawl-delay wins over PerHostDelay.
	q.SetHostDelay("a.example", 30*time.Second)
	if d := q.HostDelay("a.example"); d != 30*time.Second {
		t.Errorf("HostDelay = %v, want 30s", d)
	}
	if d := q.HostDelay("c.example"); d != 10*time.Second {
		t.Errorf("HostDelay of another host = %v, want 10s", d)
	}
	clk.Advance(10 * time.Second)
	Blocked(t, q)
	clk.Advance(20 * time.Second)
	if got := MustNext(t, q); got.URL != U("a.example", "2") {
		t.Fatalf("Next after the Crawl-delay = %s", got.URL)
	}
	// A shorter one does not shorten PerHostDelay.
	mustAdd(t, q, frontier.Item{URL: U("a.example", "3")})
	q.SetHostDelay("a.example", time.Second)
	clk.Advance(5 * time.Second)
	Blocked(t, q)
	clk.Advance(5 * time.Second)
	MustNext(t, q)
}

func testRetry(t *testing.T, open Opener) {
	clk := NewClock()
	q := open(t, frontier.Options{PerHostDelay: -1, Now: clk.Now})
	ctx := context.Background()
	src := U("a.example", "")
	mustAdd(t, q, frontier.Item{URL: U("a.example", "x"), Depth: 3, Source: src})
	it := MustNext(t, q)
	if err := q.Retry(ctx, it, time.Minute, "status 503"); err != nil {
		t.Fatal(err)
	}
	if got := state(t, q, it.URL); got != "pending" {
		t.Errorf("State after Retry = %q, want pending", got)
	}
	if s := q.Stats(); s.Pending != 1 || s.InFlight != 0 {
		t.Errorf("Stats after Retry = %+v, want 1 pending", s)
	}
	if n := mustAdd(t, q, frontier.Item{URL: it.URL}); n != 0 {
		t.Errorf("Add of a URL waiting for its retry = %d, want 0", n)
	}
	Blocked(t, q)
	clk.Advance(59 * time.Second)
	Blocked(t, q)
	clk.Advance(time.Second)
	got := MustNext(t, q)
	if got.URL != it.URL || got.Attempts != 1 || got.LastError != "status 503" || got.Depth != 3 || got.Source != src {
		t.Errorf("retried item = %+v, want attempts 1, the reason, depth and source kept", got)
	}
	// Attempts come from the queue's record, not from the caller's item.
	got.Attempts = 7
	if err := q.Retry(ctx, got, 0, "reset"); err != nil {
		t.Fatal(err)
	}
	if again := MustNext(t, q); again.Attempts != 2 || again.LastError != "reset" {
		t.Errorf("second retry = %+v, want attempts 2", again)
	}
}

func testFail(t *testing.T, open Opener) {
	q := open(t, fast())
	mustAdd(t, q, frontier.Item{URL: U("a.example", "gone")})
	it := MustNext(t, q)
	if err := q.Fail(context.Background(), it, "status 410"); err != nil {
		t.Fatal(err)
	}
	if got := state(t, q, it.URL); got != "failed:status 410" {
		t.Errorf("State = %q, want failed:status 410", got)
	}
	if s := q.Stats(); s != (frontier.Stats{Failed: 1}) {
		t.Errorf("Stats = %+v, want 1 failed", s)
	}
	if _, err := q.Next(context.Background()); !errors.Is(err, frontier.ErrDrained) {
		t.Errorf("Next after Fail: %v, want ErrDrained", err)
	}
}

func testNotInFlight(t *testing.T, open Opener) {
	q := open(t, fast())
	ctx := context.Background()
	pending := frontier.Item{URL: U("a.example", "pending")}
	mustAdd(t, q, frontier.Item{URL: U("a.example", "first")})
	it := MustNext(t, q)
	mustAdd(t, q, pending)
	never := frontier.Item{URL: U("a.example", "never")}
	for _, x := range []frontier.Item{never, pending} {
		if err := q.Done(ctx, x, "stored"); !errors.Is(err, frontier.ErrNotInFlight) {
			t.Errorf("Done(%s) = %v, want ErrNotInFlight", x.URL, err)
		}
		if err := q.Retry(ctx, x, 0, "x"); !errors.Is(err, frontier.ErrNotInFlight) {
			t.Errorf("Retry(%s) = %v, want ErrNotInFlight", x.URL, err)
		}
		if err := q.Fail(ctx, x, "x"); !errors.Is(err, frontier.ErrNotInFlight) {
			t.Errorf("Fail(%s) = %v, want ErrNotInFlight", x.URL, err)
		}
	}
	done(t, q, it)
	if err := q.Done(ctx, it, "stored"); !errors.Is(err, frontier.ErrNotInFlight) {
		t.Errorf("second Done = %v, want ErrNotInFlight", err)
	}
	if got := state(t, q, pending.URL); got != "pending" {
		t.Errorf("State of the pending URL = %q, want pending (untouched)", got)
	}
	if s := q.Stats(); s != (frontier.Stats{Pending: 1, Done: 1, Hosts: s.Hosts}) {
		t.Errorf("Stats = %+v, want 1 pending, 1 done", s)
	}
}

func testFinish(t *testing.T, open Opener) {
	q := open(t, fast())
	ctx := context.Background()
	seed := U("a.example", "")
	mustAdd(t, q, frontier.Item{URL: seed, Seed: true})
	it := MustNext(t, q)
	link := frontier.Item{URL: U("b.example", "1"), Depth: 1, Source: seed}
	// An invalid link: nothing happens, the page stays in flight.
	err := q.Finish(ctx, it, "stored", []frontier.Item{link, {URL: "mailto:x@example.com"}})
	if !errors.Is(err, frontier.ErrBadURL) {
		t.Fatalf("Finish with an invalid link = %v, want ErrBadURL", err)
	}
	if got := state(t, q, it.URL); got != "inflight" {
		t.Errorf("State after a rejected Finish = %q, want inflight", got)
	}
	if got := state(t, q, link.URL); got != "" {
		t.Errorf("link of a rejected Finish has state %q, want none", got)
	}
	// Not in flight: the links are not queued either.
	other := frontier.Item{URL: U("c.example", "x")}
	if err := q.Finish(ctx, other, "stored", []frontier.Item{link}); !errors.Is(err, frontier.ErrNotInFlight) {
		t.Fatalf("Finish of a URL not in flight = %v, want ErrNotInFlight", err)
	}
	if got := state(t, q, link.URL); got != "" {
		t.Errorf("link of a refused Finish has state %q, want none", got)
	}
	if err := q.Finish(ctx, it, "stored", []frontier.Item{link, link, {URL: seed, Depth: 1}}); err != nil {
		t.Fatal(err)
	}
	if got := state(t, q, seed); got != "done:stored" {
		t.Errorf("State(seed) = %q, want done:stored", got)
	}
	if s := q.Stats(); s.Pending != 1 || s.Done != 1 || s.InFlight != 0 {
		t.Errorf("Stats = %+v, want 1 pending (the link once), 1 done", s)
	}
	if got := MustNext(t, q); got != link {
		t.Errorf("Next = %+v, want %+v", got, link)
	}
}

func testAlias(t *testing.T, open Opener) {
	q := open(t, fast())
	ctx := context.Background()
	known, target := U("a.example", "known"), U("a.example", "target")
	mustAdd(t, q, frontier.Item{URL: known})
	seen, err := q.Alias(ctx, known, "alias-of:x")
	if err != nil || !seen {
		t.Errorf("Alias of a pending URL = %v, %v; want seen", seen, err)
	}
	if got := state(t, q, known); got != "pending" {
		t.Errorf("State of a known URL after Alias = %q, want pending (unchanged)", got)
	}
	seen, err = q.Alias(ctx, target, "alias-of:"+known)
	if err != nil || seen {
		t.Errorf("Alias of a new URL = %v, %v; want not seen", seen, err)
	}
	if got := state(t, q, target); got != "done:alias-of:"+known {
		t.Errorf("State after Alias = %q", got)
	}
	if n := mustAdd(t, q, frontier.Item{URL: target}); n != 0 {
		t.Errorf("Add of an alias = %d, want 0", n)
	}
	if _, err := q.Alias(ctx, "not a url", "x"); !errors.Is(err, frontier.ErrBadURL) {
		t.Errorf("Alias of garbage = %v, want ErrBadURL", err)
	}
	if s := q.Stats(); s.Done != 1 || s.Pending != 1 {
		t.Errorf("Stats = %+v, want 1 done (the alias), 1 pending", s)
	}
}

func testDrained(t *testing.T, open Opener) {
	q := open(t, fast())
	ctx := context.Background()
	if _, err := q.Next(ctx); !errors.Is(err, frontier.ErrDrained) {
		t.Fatalf("Next on an empty queue = %v, want ErrDrained", err)
	}
	mustAdd(t, q, frontier.Item{URL: U("a.example", "1")})
	it := MustNext(t, q)
	// In flight: the page may have links, so the crawl is not over.
	Blocked(t, q)
	done(t, q, it)
	if _, err := q.Next(ctx); !errors.Is(err, frontier.ErrDrained) {
		t.Fatalf("Next after the last Done = %v, want ErrDrained", err)
	}
	if s := q.Stats(); s.Pending != 0 || s.InFlight != 0 || s.Done != 1 {
		t.Errorf("Stats = %+v, want 1 done", s)
	}
}

// A Next waiting for a slot returns the link a Finish queues, and one
// waiting with nothing queued returns ErrDrained after the last Done.
func testBlockedNextWakes(t *testing.T, open Opener) {
	q := open(t, fast())
	ctx := context.Background()
	mustAdd(t, q, frontier.Item{URL: U("a.example", "")})
	seed := MustNext(t, q)
	type result struct {
		it  frontier.Item
		err error
	}
	next := func() <-chan result {
		ch := make(chan result, 1)
		go func() {
			ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			it, err := q.Next(ctx)
			ch <- result{it, err}
		}()
		return ch
	}
	waiting := next()
	link := frontier.Item{URL: U("b.example", "1"), Depth: 1}
	if err := q.Finish(ctx, seed, "stored", []frontier.Item{link}); err != nil {
		t.Fatal(err)
	}
	r := <-waiting
	if r.err != nil || r.it.URL != link.URL {
		t.Fatalf("waiting Next = %+v, %v; want %s", r.it, r.err, link.URL)
	}
	waiting = next()
	done(t, q, r.it)
	if r := <-waiting; !errors.Is(r.err, frontier.ErrDrained) {
		t.Fatalf("waiting Next after the last Done = %+v, %v; want ErrDrained", r.it, r.err)
	}
}

func testClose(t *testing.T, open Opener) {
	q := open(t, fast())
	ctx := context.Background()
	mustAdd(t, q, frontier.Item{URL: U("a.example", "1")}, frontier.Item{URL: U("a.example", "2")})
	it := MustNext(t, q)
	q2 := open(t, frontier.Options{PerHostInFlight: 1, PerHostDelay: -1})
	mustAdd(t, q2, frontier.Item{URL: U("a.example", "1")}, frontier.Item{URL: U("a.example", "2")})
	it2 := MustNext(t, q2)
	blocked := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		_, err := q2.Next(ctx) // waits: one in flight per host
		blocked <- err
	}()
	for _, x := range []frontier.Queue{q, q2} {
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
		if err := x.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	}
	if err := <-blocked; !errors.Is(err, frontier.ErrClosed) {
		t.Errorf("blocked Next after Close = %v, want ErrClosed", err)
	}
	if _, err := q.Next(ctx); !errors.Is(err, frontier.ErrClosed) {
		t.Errorf("Next after Close = %v, want ErrClosed", err)
	}
	// Pages in flight can still be completed, and links still queued.
	if err := q.Finish(ctx, it, "stored", []frontier.Item{{URL: U("b.example", "1"), Depth: 1}}); err != nil {
		t.Errorf("Finish after Close: %v", err)
	}
	if err := q2.Retry(ctx, it2, 0, "shutdown"); err != nil {
		t.Errorf("Retry after Close: %v", err)
	}
	if got := state(t, q, U("b.example", "1")); got != "pending" {
		t.Errorf("link queued after Close has state %q, want pending", got)
	}
}

// Workers take and complete URLs at once; each URL is handed out exactly
// once and the queue drains. Politeness is off, so this is about races.
func testConcurrent(t *testing.T, open Opener) {
	q := open(t, frontier.Options{PerHostInFlight: 3, PerHostDelay: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const hosts, perHost, workers = 5, 40, 6
	var seeds []frontier.Item
	for h := range hosts {
		seeds = append(seeds, frontier.Item{URL: U(fmt.Sprintf("h%d.example", h), ""), Seed: true})
	}
	mustAdd(t, q, seeds...)
	var mu sync.Mutex
	got := map[string]int{}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				it, err := q.Next(ctx)
				if errors.Is(err, frontier.ErrDrained) {
					return
				}
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				got[it.URL]++
				mu.Unlock()
				var links []frontier.Item
				if it.Seed {
					host := frontier.HostKey(it.URL)
					for i := range perHost {
						// Every page links to all pages of its host: most
						// links are seen already.
						links = append(links, frontier.Item{URL: U(host, fmt.Sprint(i)), Depth: 1, Source: it.URL})
					}
				} else if it.Depth == 1 {
					host := frontier.HostKey(it.URL)
					links = append(links, frontier.Item{URL: U(host, "p"+it.URL[len(it.URL)-1:]), Depth: 2, Source: it.URL})
				}
				if err := q.Finish(ctx, it, "stored", links); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	want := hosts * (1 + perHost + 10) // seeds, pages, p0..p9
	if len(got) != want {
		t.Errorf("%d URLs handed out, want %d", len(got), want)
	}
	for url, n := range got {
		if n != 1 {
			t.Errorf("%s handed out %d times", url, n)
		}
	}
	if s := q.Stats(); s.Done != want || s.Pending != 0 || s.InFlight != 0 {
		t.Errorf("Stats = %+v, want %d done", s, want)
	}
}
