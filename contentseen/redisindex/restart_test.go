package redisindex

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/contentseen/contentseentest"
	"github.com/simcrawl/simcrawl/internal/redistest"
)

// Redis is killed and restarted from its append-only file while workers
// judge copies: they wait and reconnect, none fails or panics, every
// cluster ends with exactly one stored page and the keys are consistent.
// The server runs with appendfsync always, under which every write that
// was answered survives, so the count must be exact (with everysec an OS
// crash could lose a confirm: see doc.go).
func TestRedisRestartMidRun(t *testing.T) {
	srv := redistest.Start(t, redistest.WithArgs("--appendfsync", "always"))
	const workers, perWorker, nclusters = 3, 2, 80
	r := rand.New(rand.NewPCG(9, 10))
	centres, pages := clusters(r, nclusters, workers*perWorker, "w")
	clusterOf := func(e contentseen.Entry) int {
		for i, c := range centres {
			if contentseen.Distance(c, e.Fingerprint) <= 1 {
				return i
			}
		}
		return -1
	}
	name := newName()
	so := contentseen.SharedOptions{K: 3, Lease: 10 * time.Second}
	idx := make([]*Index, workers)
	for w := range idx {
		idx[w] = open(t, redistest.Client(t, srv.Addr()), Options{Name: name, SharedOptions: so, Settle: 3 * time.Second})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a hung client fails, not hangs, the test
	defer cancel()
	var done atomic.Int64
	third := make(chan struct{})
	var once sync.Once
	stored := make([]atomic.Int64, nclusters)
	var wg sync.WaitGroup
	errs := make(chan error, workers*perWorker)
	for g := range workers * perWorker {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, p := range pages[g] {
				ok, err := judge(ctx, idx[g%workers], p, clusterOf)
				if err != nil {
					errs <- err
					return
				}
				if ok {
					stored[p.cluster].Add(1)
				}
				if done.Add(1) == int64(len(pages[0])*len(pages)/3) {
					once.Do(func() { close(third) })
				}
			}
		}()
	}
	<-third
	start := time.Now()
	srv.Restart() // a third of the pages judged: kill -9, start from the AOF
	t.Logf("restart took %v", time.Since(start))
	wg.Wait()
	t.Logf("all judged %v after the restart began", time.Since(start))
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for c := range stored {
		if n := stored[c].Load(); n != 1 {
			t.Errorf("cluster %d: %d pages stored, want 1", c, n)
		}
	}
	if n, p := checkConsistent(t, idx[0]); n != nclusters || p != 0 {
		t.Errorf("index holds %d entries, %d pending, want %d, 0", n, p, nclusters)
	}
}

// After a restart that lost the server's last writes (the tail of the
// append-only file cut off, as an OS crash under appendfsync everysec
// would): a token from before is stale (the seq counter jumped past it),
// the claimant's own lost claim is written again and its confirm succeeds
// (healing, heal.go), and the claim of a worker that forgot it (a process
// started again) is lost: ErrLeaseLost, never given to another page.
func TestRestartLostWrites(t *testing.T) {
	ctx := context.Background()
	// appendfsync always: each answered write is in the file when the
	// reply comes, so the file's size marks the writes before it (everysec
	// may postpone the write on a busy disk).
	srv := redistest.Start(t, redistest.WithArgs("--appendfsync", "always"))
	o := Options{Name: newName(), SharedOptions: contentseen.SharedOptions{K: 3}, Settle: 300 * time.Millisecond}
	x := open(t, redistest.Client(t, srv.Addr()), o)
	gone := open(t, redistest.Client(t, srv.Addr()), o) // a worker whose process dies with Redis
	a := contentseentest.Entry("w/a", 0x1111111111111111, 1)
	ca, err := x.Claim(ctx, a, 0)
	if err != nil || ca.Seq != 1 {
		t.Fatalf("Claim a = %+v, %v", ca, err)
	}
	if err := x.Confirm(ctx, ca.Seq, a.ID); err != nil {
		t.Fatal(err)
	}
	aof, size := incrAOF(t, srv)

	b := contentseentest.Entry("w/b", 0x2222222222222222, 2)
	cb, err := x.Claim(ctx, b, ca.Token)
	if err != nil || cb.Seq != 2 {
		t.Fatalf("Claim b = %+v, %v", cb, err)
	}
	if err := x.Confirm(ctx, cb.Seq, b.ID); err != nil {
		t.Fatal(err)
	}
	e := contentseentest.Entry("v/e", 0x5555555555555555, 5)
	ce, err := gone.Claim(ctx, e, cb.Token)
	if err != nil || ce.Seq != 3 {
		t.Fatalf("Claim e = %+v, %v", ce, err)
	}
	_, tok, err := x.Lookup(ctx, 0x3333333333333333, [16]byte{})
	if err != nil || tok != 3 {
		t.Fatalf("Lookup token = %d, %v, want 3", tok, err)
	}

	srv.Kill()
	if err := os.Truncate(aof, size); err != nil {
		t.Fatal(err)
	}
	srv.Restart()

	// The first claim after the restart waits for the settle window, x
	// replaying b meanwhile, and is sent back to look up again.
	if _, err := x.Claim(ctx, contentseentest.Entry("w/c", 0x3333333333333333, 3), tok); !errors.Is(err, contentseen.ErrStaleToken) {
		t.Fatalf("Claim with a token from before the lost writes = %v, want ErrStaleToken", err)
	}
	if err := x.Confirm(ctx, cb.Seq, b.ID); err != nil {
		t.Fatalf("Confirm of b, lost and replayed = %v, want nil", err)
	}
	h, err := x.Heal(ctx)
	if err != nil || h != (contentseen.Healed{Restarts: 1, Replayed: 1}) {
		t.Fatalf("Heal = %+v, %v, want one restart, one claim replayed in time", h, err)
	}
	// A worker started again on e's data directory remembers nothing.
	fresh := open(t, redistest.Client(t, srv.Addr()), o)
	if err := fresh.Confirm(ctx, ce.Seq, e.ID); !errors.Is(err, contentseen.ErrLeaseLost) {
		t.Fatalf("Confirm of e by a restarted worker = %v, want ErrLeaseLost", err)
	}
	d := contentseentest.Entry("w/d", 0x4444444444444444, 4)
	_, tok, err = x.Lookup(ctx, d.Fingerprint, d.Digest)
	if err != nil {
		t.Fatal(err)
	}
	cd, err := x.Claim(ctx, d, tok)
	if err != nil || cd.Seq <= seqJump {
		t.Fatalf("Claim d = %+v, %v, want a seq past the jump %d", cd, err, seqJump)
	}
	if err := fresh.Confirm(ctx, ce.Seq, e.ID); !errors.Is(err, contentseen.ErrLeaseLost) {
		t.Fatalf("Confirm of e = %v after d's claim, want ErrLeaseLost", err)
	}
	if err := x.Confirm(ctx, cd.Seq, d.ID); err != nil {
		t.Fatal(err)
	}
	for _, p := range []contentseen.Entry{a, b, d} {
		es, _, err := fresh.Lookup(ctx, p.Fingerprint, p.Digest)
		if err != nil || len(es) != 1 || es[0].ID != p.ID || es[0].Pending {
			t.Fatalf("Lookup of %s = %v, %v, want it committed", p.ID, seqs(es), err)
		}
	}
	if n, p := checkConsistent(t, x); n != 3 || p != 0 {
		t.Errorf("index holds %d entries, %d pending, want 3, 0", n, p)
	}
}

// incrAOF returns the path of the server's incremental append-only file
// (Redis 7's multi-part AOF) and its size now.
func incrAOF(t *testing.T, srv *redistest.Server) (string, int64) {
	t.Helper()
	ms, err := filepath.Glob(filepath.Join(srv.Dir(), "appendonlydir", "*.incr.aof"))
	if err != nil || len(ms) != 1 {
		t.Fatalf("incremental AOF in %s: %v, %v", srv.Dir(), ms, err)
	}
	fi, err := os.Stat(ms[0])
	if err != nil {
		t.Fatal(err)
	}
	return ms[0], fi.Size()
}

// While the server is down, calls wait and retry until it is back, or
// until their context ends, naming the server.
func TestUnreachableWhileRunning(t *testing.T) {
	srv := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() {
		if err := rdb.Close(); err != nil {
			t.Error(err)
		}
	})
	x := open(t, rdb, Options{Name: newName(), SharedOptions: contentseen.SharedOptions{K: 3}})
	srv.Kill()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, _, err := x.Lookup(ctx, 1, [16]byte{})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), srv.Addr()) {
		t.Fatalf("Lookup with redis down = %v, want the deadline, naming %s", err, srv.Addr())
	}
}
