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
		idx[w] = open(t, client(t, srv.Addr()), Options{Name: name, SharedOptions: so})
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
// would): a token from before is ahead of the index (ErrStaleToken), a
// confirm of a lost claim is ErrLeaseLost, and so is one of a seq given
// again to another page, which the old claimant can neither confirm nor
// release.
func TestRestartLostWrites(t *testing.T) {
	ctx := context.Background()
	// appendfsync always: each answered write is in the file when the
	// reply comes, so the file's size marks the writes before it (everysec
	// may postpone the write on a busy disk).
	srv := redistest.Start(t, redistest.WithArgs("--appendfsync", "always"))
	x := open(t, client(t, srv.Addr()), Options{Name: newName(), SharedOptions: contentseen.SharedOptions{K: 3}})
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
	_, tok, err := x.Lookup(ctx, 0x3333333333333333, [16]byte{})
	if err != nil || tok != 2 {
		t.Fatalf("Lookup token = %d, %v, want 2", tok, err)
	}

	srv.Kill()
	if err := os.Truncate(aof, size); err != nil {
		t.Fatal(err)
	}
	srv.Restart()

	if _, err := x.Claim(ctx, contentseentest.Entry("w/c", 0x3333333333333333, 3), tok); !errors.Is(err, contentseen.ErrStaleToken) {
		t.Fatalf("Claim with a token from before the lost writes = %v, want ErrStaleToken", err)
	}
	if err := x.Confirm(ctx, cb.Seq, b.ID); !errors.Is(err, contentseen.ErrLeaseLost) {
		t.Fatalf("Confirm of a lost entry = %v, want ErrLeaseLost", err)
	}
	// Seq 2 is given again, to another page.
	d := contentseentest.Entry("w/d", 0x4444444444444444, 4)
	_, tok, err = x.Lookup(ctx, d.Fingerprint, d.Digest)
	if err != nil || tok != 1 {
		t.Fatalf("Lookup after the restart: token %d, %v, want 1", tok, err)
	}
	cd, err := x.Claim(ctx, d, tok)
	if err != nil || cd.Seq != cb.Seq {
		t.Fatalf("Claim d = %+v, %v, want seq %d again", cd, err, cb.Seq)
	}
	if err := x.Confirm(ctx, cb.Seq, b.ID); !errors.Is(err, contentseen.ErrLeaseLost) {
		t.Fatalf("Confirm of seq %d by its old claimant = %v, want ErrLeaseLost", cb.Seq, err)
	}
	if err := x.Release(ctx, cb.Seq, b.ID); err != nil {
		t.Fatalf("Release of seq %d by its old claimant = %v, want nil (not its entry)", cb.Seq, err)
	}
	if err := x.Confirm(ctx, cd.Seq, d.ID); err != nil {
		t.Fatal(err)
	}
	es, _, err := x.Lookup(ctx, d.Fingerprint, [16]byte{})
	if err != nil || len(es) != 1 || es[0].ID != d.ID || es[0].Pending {
		t.Fatalf("Lookup of d = %v, %v, want d committed", seqs(es), err)
	}
	es, _, err = x.Lookup(ctx, a.Fingerprint, a.Digest)
	if err != nil || len(es) != 1 || es[0].ID != a.ID || es[0].Pending {
		t.Fatalf("Lookup of a = %v, %v, want a committed (written before the lost ones)", seqs(es), err)
	}
	checkConsistent(t, x)
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
