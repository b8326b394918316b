package frontier

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// clock is a settable time source for Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// openDB opens a real bbolt file. NoSync keeps tests fast; durability
// across a process crash is bbolt's business, not this package's.
func openDB(t testing.TB, path string) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func newFrontier(t testing.TB, o Options) (*Frontier, *bolt.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "crawl.db")
	db := openDB(t, path)
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	f, err := New(db, o)
	if err != nil {
		t.Fatal(err)
	}
	return f, db, path
}

func u(host, path string) string { return "http://" + host + "/" + path }

func mustAdd(t testing.TB, f *Frontier, items ...Item) int {
	t.Helper()
	n, err := f.Add(context.Background(), items...)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func mustNext(t testing.TB, f *Frontier) Item {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	it, err := f.Next(ctx)
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return it
}

// blocked asserts that Next does not hand anything out right now.
func blocked(t testing.TB, f *Frontier) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	it, err := f.Next(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next = %q, %v; want it to block", it.URL, err)
	}
}

func state(t testing.TB, f *Frontier, url string) string {
	t.Helper()
	st, err := f.State(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func fast() Options { return Options{PerHostInFlight: 100, PerHostDelay: -1} }

func TestAddDedup(t *testing.T) {
	f, _, _ := newFrontier(t, fast())
	a, b := u("a.example", "1"), u("a.example", "2")
	if n := mustAdd(t, f, Item{URL: a, Seed: true}, Item{URL: b}, Item{URL: a}); n != 2 {
		t.Errorf("Add = %d, want 2 (repeat within one call skipped)", n)
	}
	if n := mustAdd(t, f, Item{URL: a}, Item{URL: b}); n != 0 {
		t.Errorf("Add of pending URLs = %d, want 0", n)
	}
	it := mustNext(t, f)
	if n := mustAdd(t, f, Item{URL: it.URL}); n != 0 {
		t.Errorf("Add of in-flight URL = %d, want 0", n)
	}
	if err := f.Done(context.Background(), it, "stored"); err != nil {
		t.Fatal(err)
	}
	if n := mustAdd(t, f, Item{URL: it.URL}); n != 0 {
		t.Errorf("Add of done URL = %d, want 0", n)
	}
	if got := state(t, f, a); got != "done:stored" {
		t.Errorf("State(a) = %q, want done:stored", got)
	}
	if got := state(t, f, b); got != "pending" {
		t.Errorf("State(b) = %q, want pending", got)
	}
	if got := state(t, f, u("a.example", "never")); got != "" {
		t.Errorf("State(unknown) = %q, want empty", got)
	}
	if s := f.Stats(); s.Pending != 1 || s.Done != 1 || s.InFlight != 0 {
		t.Errorf("Stats = %+v, want 1 pending, 1 done", s)
	}
	if !it.Seed || it.Depth != 0 || it.Source != "" {
		t.Errorf("Next = %+v, want the seed as added", it)
	}
}

func TestAddRejectsInvalidAtomically(t *testing.T) {
	f, _, _ := newFrontier(t, fast())
	for _, bad := range []Item{
		{URL: "example.com/a"},
		{URL: "ftp://example.com/"},
		{URL: "http://example.com/a#frag"},
		{URL: "http:///a"},
		{URL: "http://example.com/", Depth: -1},
	} {
		_, err := f.Add(context.Background(), Item{URL: u("ok.example", "")}, bad)
		if !errors.Is(err, ErrBadURL) {
			t.Errorf("Add(%+v) error %v, want ErrBadURL", bad, err)
		}
	}
	if got := state(t, f, u("ok.example", "")); got != "" {
		t.Errorf("valid item of a rejected batch has state %q, want none", got)
	}
}

func TestAddTxRollback(t *testing.T) {
	f, db, _ := newFrontier(t, fast())
	boom := errors.New("boom")
	err := db.Update(func(tx *bolt.Tx) error {
		n, err := f.AddTx(tx, Item{URL: u("a.example", "1")}, Item{URL: u("b.example", "1")})
		if err != nil || n != 2 {
			t.Errorf("AddTx = %d, %v; want 2, nil", n, err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update error %v, want boom", err)
	}
	if got := state(t, f, u("a.example", "1")); got != "" {
		t.Errorf("State after rollback = %q, want none", got)
	}
	if s := f.Stats(); s != (Stats{}) {
		t.Errorf("Stats after rollback = %+v, want zero", s)
	}
	if _, err := f.Next(context.Background()); !errors.Is(err, ErrDrained) {
		t.Errorf("Next after rollback: %v, want ErrDrained", err)
	}
	// The same URLs can be added afterwards: the seen mark rolled back too.
	if n := mustAdd(t, f, Item{URL: u("a.example", "1")}); n != 1 {
		t.Errorf("Add after rollback = %d, want 1", n)
	}
	if err := db.View(func(tx *bolt.Tx) error {
		_, err := f.AddTx(tx, Item{URL: u("c.example", "1")})
		return err
	}); err == nil {
		t.Error("AddTx in a read-only transaction succeeded")
	}
}

func TestBreadthFirst(t *testing.T) {
	f, _, _ := newFrontier(t, fast())
	// Added out of depth order, interleaving hosts.
	mustAdd(t, f,
		Item{URL: u("a.example", "d1-1"), Depth: 1},
		Item{URL: u("b.example", "d0-1"), Depth: 0},
		Item{URL: u("c.example", "d2-1"), Depth: 2},
		Item{URL: u("a.example", "d0-2"), Depth: 0},
	)
	mustAdd(t, f,
		Item{URL: u("b.example", "d1-2"), Depth: 1},
		Item{URL: u("c.example", "d0-3"), Depth: 0},
		Item{URL: u("a.example", "d1-3"), Depth: 1},
	)
	want := []string{
		u("b.example", "d0-1"), u("a.example", "d0-2"), u("c.example", "d0-3"),
		u("a.example", "d1-1"), u("b.example", "d1-2"), u("a.example", "d1-3"),
		u("c.example", "d2-1"),
	}
	for i, w := range want {
		if got := mustNext(t, f); got.URL != w {
			t.Errorf("Next #%d = %s, want %s", i, got.URL, w)
		}
	}
	if s := f.Stats(); s.InFlight != len(want) || s.Pending != 0 {
		t.Errorf("Stats = %+v, want all in flight", s)
	}
}

func TestPerHostInFlightLimit(t *testing.T) {
	f, _, _ := newFrontier(t, Options{PerHostInFlight: 2, PerHostDelay: -1})
	for i := range 4 {
		mustAdd(t, f, Item{URL: u("a.example", fmt.Sprint(i))})
	}
	mustAdd(t, f, Item{URL: u("b.example", "0")})
	first, second := mustNext(t, f), mustNext(t, f)
	if HostKey(first.URL) != "a.example" || HostKey(second.URL) != "a.example" {
		t.Fatalf("first two = %s, %s; want a.example twice (FIFO)", first.URL, second.URL)
	}
	// a.example is full, so b.example goes next although it was added later.
	if got := mustNext(t, f); got.URL != u("b.example", "0") {
		t.Errorf("third Next = %s, want b.example (a.example at its limit)", got.URL)
	}
	blocked(t, f)
	// A blocked Next is woken by Done.
	got := make(chan Item)
	go func() {
		it, err := f.Next(context.Background())
		if err != nil {
			t.Error(err)
		}
		got <- it
	}()
	if err := f.Done(context.Background(), first, "stored"); err != nil {
		t.Fatal(err)
	}
	if it := <-got; it.URL != u("a.example", "2") {
		t.Errorf("Next after Done = %s, want a.example/2", it.URL)
	}
}

func TestPerHostDelay(t *testing.T) {
	clk := newClock()
	f, _, _ := newFrontier(t, Options{PerHostInFlight: 5, PerHostDelay: 10 * time.Second, Now: clk.Now})
	for i := range 3 {
		mustAdd(t, f, Item{URL: u("a.example", fmt.Sprint(i))})
	}
	mustAdd(t, f, Item{URL: u("b.example", "0")})
	if got := mustNext(t, f); got.URL != u("a.example", "0") {
		t.Fatalf("Next = %s", got.URL)
	}
	if got := mustNext(t, f); got.URL != u("b.example", "0") {
		t.Fatalf("Next = %s, want b.example while a.example waits", got.URL)
	}
	blocked(t, f)
	clk.Advance(9 * time.Second)
	blocked(t, f)
	clk.Advance(time.Second)
	if got := mustNext(t, f); got.URL != u("a.example", "1") {
		t.Fatalf("Next after the delay = %s", got.URL)
	}
	// A longer Crawl-delay wins over PerHostDelay.
	f.SetHostDelay("a.example", 30*time.Second)
	clk.Advance(10 * time.Second)
	blocked(t, f)
	clk.Advance(20 * time.Second)
	if got := mustNext(t, f); got.URL != u("a.example", "2") {
		t.Fatalf("Next after the Crawl-delay = %s", got.URL)
	}
	// A shorter one does not shorten PerHostDelay.
	mustAdd(t, f, Item{URL: u("a.example", "3")})
	f.SetHostDelay("a.example", time.Second)
	clk.Advance(5 * time.Second)
	blocked(t, f)
	clk.Advance(5 * time.Second)
	mustNext(t, f)
}

func TestRetry(t *testing.T) {
	clk := newClock()
	f, _, _ := newFrontier(t, Options{PerHostDelay: -1, Now: clk.Now})
	mustAdd(t, f, Item{URL: u("a.example", "x"), Depth: 3, Source: u("a.example", "")})
	it := mustNext(t, f)
	if err := f.Retry(context.Background(), it, time.Minute, "status 503"); err != nil {
		t.Fatal(err)
	}
	if got := state(t, f, it.URL); got != "pending" {
		t.Errorf("State after Retry = %q, want pending", got)
	}
	if s := f.Stats(); s.Pending != 1 || s.InFlight != 0 {
		t.Errorf("Stats after Retry = %+v", s)
	}
	blocked(t, f) // not due: neither handed out nor "drained"
	clk.Advance(time.Minute)
	again := mustNext(t, f)
	want := Item{URL: it.URL, Depth: 3, Source: it.Source, Attempts: 1, LastError: "status 503"}
	if again != want {
		t.Errorf("Next after Retry = %+v, want %+v", again, want)
	}
	if err := f.Retry(context.Background(), again, 0, "timeout"); err != nil {
		t.Fatal(err)
	}
	if third := mustNext(t, f); third.Attempts != 2 || third.LastError != "timeout" {
		t.Errorf("second retry gave %+v, want Attempts 2", third)
	}
	if err := f.Retry(context.Background(), it, 0, "x"); err != nil {
		t.Fatal(err) // it is in flight again (the third hand-out)
	}
	if err := f.Retry(context.Background(), it, 0, "x"); !errors.Is(err, ErrNotInFlight) {
		t.Errorf("Retry of a pending URL: %v, want ErrNotInFlight", err)
	}
}

func TestFail(t *testing.T) {
	f, _, _ := newFrontier(t, fast())
	mustAdd(t, f, Item{URL: u("a.example", "1")}, Item{URL: u("a.example", "2")})
	it := mustNext(t, f)
	if err := f.Fail(context.Background(), it, "status 404"); err != nil {
		t.Fatal(err)
	}
	if got := state(t, f, it.URL); got != "failed:status 404" {
		t.Errorf("State = %q", got)
	}
	if err := f.Done(context.Background(), it, "stored"); !errors.Is(err, ErrNotInFlight) {
		t.Errorf("Done after Fail: %v, want ErrNotInFlight", err)
	}
	var failed []string
	err := f.Failed(context.Background(), func(url, reason string) error {
		failed = append(failed, url+" "+reason)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(failed) != 1 || failed[0] != it.URL+" status 404" {
		t.Errorf("Failed listed %q", failed)
	}
	if s := f.Stats(); s.Failed != 1 || s.Pending != 1 {
		t.Errorf("Stats = %+v", s)
	}
	if n := mustAdd(t, f, Item{URL: it.URL}); n != 0 {
		t.Errorf("a failed URL was added again")
	}
}

func TestDrained(t *testing.T) {
	f, _, _ := newFrontier(t, fast())
	if _, err := f.Next(context.Background()); !errors.Is(err, ErrDrained) {
		t.Fatalf("Next on empty frontier: %v, want ErrDrained", err)
	}
	mustAdd(t, f, Item{URL: u("a.example", "1")})
	it := mustNext(t, f)
	blocked(t, f) // in flight: the page may still add links
	done := make(chan error)
	go func() {
		_, err := f.Next(context.Background())
		done <- err
	}()
	if err := f.Done(context.Background(), it, "stored"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrDrained) {
		t.Errorf("waiting Next after the last Done: %v, want ErrDrained", err)
	}
}

func TestDoneAndAddInOneTx(t *testing.T) {
	f, db, _ := newFrontier(t, fast())
	mustAdd(t, f, Item{URL: u("a.example", ""), Seed: true})
	it := mustNext(t, f)
	// The crawler's order: complete the page and queue its links atomically.
	err := db.Update(func(tx *bolt.Tx) error {
		if err := f.DoneTx(tx, it, "stored"); err != nil {
			return err
		}
		_, err := f.AddTx(tx, Item{URL: u("a.example", "child"), Depth: 1, Source: it.URL})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustNext(t, f); got.URL != u("a.example", "child") || got.Source != it.URL {
		t.Errorf("Next = %+v", got)
	}
	// A rolled-back DoneTx leaves the URL in flight, memory included.
	child := Item{URL: u("a.example", "child")}
	boom := errors.New("boom")
	err = db.Update(func(tx *bolt.Tx) error {
		if err := f.DoneTx(tx, child, "stored"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if got := state(t, f, child.URL); got != "inflight" {
		t.Errorf("State after rolled-back DoneTx = %q, want inflight", got)
	}
	if s := f.Stats(); s.InFlight != 1 {
		t.Errorf("Stats after rolled-back DoneTx = %+v", s)
	}
}

func TestResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crawl.db")
	db := openDB(t, path)
	f, err := New(db, fast())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		mustAdd(t, f, Item{URL: u("a.example", fmt.Sprint(i)), Depth: i % 2})
	}
	first, second := mustNext(t, f), mustNext(t, f) // depth 0: 0, 2
	if err := f.Done(context.Background(), first, "stored"); err != nil {
		t.Fatal(err)
	}
	// "Crash": second stays in flight. Close the file without telling f.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = openDB(t, path)
	defer db.Close()
	f, err = New(db, fast())
	if err != nil {
		t.Fatal(err)
	}
	if got := state(t, f, second.URL); got != "pending" {
		t.Errorf("in-flight URL after reopen: %q, want pending", got)
	}
	if got := state(t, f, first.URL); got != "done:stored" {
		t.Errorf("done URL after reopen: %q", got)
	}
	if s := f.Stats(); s != (Stats{Pending: 4, Done: 1, Hosts: 1}) {
		t.Errorf("Stats after reopen = %+v", s)
	}
	// The interrupted URL comes back at its old place, the done one never.
	want := []string{second.URL, u("a.example", "4"), u("a.example", "1"), u("a.example", "3")}
	for i, w := range want {
		it := mustNext(t, f)
		if it.URL != w {
			t.Errorf("Next #%d after reopen = %s, want %s", i, it.URL, w)
		}
		if err := f.Done(context.Background(), it, "stored"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.Next(context.Background()); !errors.Is(err, ErrDrained) {
		t.Errorf("Next = %v, want ErrDrained", err)
	}
	// New URLs added after a restart continue the FIFO sequence.
	mustAdd(t, f, Item{URL: u("b.example", "new")})
	if got := mustNext(t, f); got.URL != u("b.example", "new") {
		t.Errorf("Next = %s", got.URL)
	}
}

func TestResumeKeepsRetries(t *testing.T) {
	clk := newClock()
	path := filepath.Join(t.TempDir(), "crawl.db")
	db := openDB(t, path)
	f, err := New(db, Options{PerHostDelay: -1, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	mustAdd(t, f, Item{URL: u("a.example", "1")})
	if err := f.Retry(context.Background(), mustNext(t, f), time.Hour, "429"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openDB(t, path)
	defer db.Close()
	f, err = New(db, Options{PerHostDelay: -1, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	blocked(t, f)
	clk.Advance(time.Hour)
	if got := mustNext(t, f); got.Attempts != 1 || got.LastError != "429" {
		t.Errorf("retried item after reopen = %+v", got)
	}
}

func TestClose(t *testing.T) {
	f, _, _ := newFrontier(t, fast())
	mustAdd(t, f, Item{URL: u("a.example", "1")})
	it := mustNext(t, f)
	errc := make(chan error)
	go func() {
		_, err := f.Next(context.Background())
		errc <- err
	}()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Errorf("blocked Next after Close: %v, want ErrClosed", err)
	}
	if err := f.Done(context.Background(), it, "stored"); err != nil {
		t.Errorf("Done after Close: %v (in-flight pages must still complete)", err)
	}
}

func TestNextCancelled(t *testing.T) {
	f, _, _ := newFrontier(t, fast())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Next with cancelled ctx: %v", err)
	}
}

func TestNextWokenByAdd(t *testing.T) {
	f, _, _ := newFrontier(t, fast())
	mustAdd(t, f, Item{URL: u("a.example", "1")})
	mustNext(t, f) // in flight, so the crawl is not drained
	got := make(chan Item)
	go func() {
		it, err := f.Next(context.Background())
		if err != nil {
			t.Error(err)
		}
		got <- it
	}()
	mustAdd(t, f, Item{URL: u("b.example", "1"), Depth: 1})
	if it := <-got; it.URL != u("b.example", "1") {
		t.Errorf("woken Next = %+v", it)
	}
}

func TestNewRepairsCounts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crawl.db")
	db := openDB(t, path)
	defer db.Close()
	f, err := New(db, fast())
	if err != nil {
		t.Fatal(err)
	}
	mustAdd(t, f, Item{URL: u("a.example", "1")}, Item{URL: u("a.example", "2")})
	if err := f.Done(context.Background(), mustNext(t, f), "stored"); err != nil {
		t.Fatal(err)
	}
	mustNext(t, f)
	err = db.Update(func(tx *bolt.Tx) error { // damage the cached counts
		return tx.Bucket([]byte("frontier")).Bucket(bMeta).Put(kCounts, counts{pending: 7, inflight: 3}.bytes())
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err = New(db, fast())
	if err != nil {
		t.Fatal(err)
	}
	if s := f.Stats(); s != (Stats{Pending: 1, Done: 1, Hosts: 1}) {
		t.Errorf("Stats after repair = %+v", s)
	}
}
