package redisindex

import (
	"context"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/contentseen/contentseentest"
	"github.com/simcrawl/simcrawl/internal/redistest"
)

// A near copy's look-up that a restart cuts in two: LookupClaim's script
// claims the copy on the old server, finds the page it copies in a
// bucket, and the page's entry is read (the second round trip) from the
// restarted server, which lost it. The copy must not be judged new on
// what the restarted server no longer holds: the page's worker writes it
// again under another seq within the settle window, and the copy is then
// dropped as its copy. Taking the missing entry for a released one
// stored both, as TestBackendRedisLostWrites did (/p/35 and /p/36, both
// by one worker, right after the restart).
func TestHealLookupCutByRestart(t *testing.T) {
	t.Parallel() // waits on the settle window, not the CPU
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := redistest.Start(t, redistest.WithArgs("--appendfsync", "always"))
	o := Options{Name: newName(), SharedOptions: contentseen.SharedOptions{K: 3}, Settle: 3 * time.Second}
	w1 := open(t, redistest.Client(t, srv.Addr()), o)
	rdb2 := redistest.Client(t, srv.Addr())
	w2 := open(t, rdb2, o)
	judgeStore(ctx, t, judgeLookupClaim, w1, contentseentest.Entry("w1/0", 0x0f0f0f0f0f0f0f0f, 1))
	aof, size := incrAOF(t, srv) // T

	a := contentseentest.Entry("w1/1", 0x1234567812345678, 2)
	if v := judgeStore(ctx, t, judgeLookupClaim, w1, a); v.Seq == 0 {
		t.Fatalf("page A: %+v, want claimed", v)
	}
	// Worker 2's look-up script runs on the server that holds A; the
	// server then crashes and comes back without the writes after T,
	// before the look-up's second round trip.
	cut := &pauseAfterLookupClaim{paused: make(chan struct{}), resume: make(chan struct{})}
	cut.armed.Store(true)
	rdb2.AddHook(cut)
	copyA := contentseentest.Entry("w2/1", a.Fingerprint^1, 20) // near: another digest
	isCopy := func(c contentseen.Entry) bool { return contentseen.Distance(c.Fingerprint, a.Fingerprint) <= 3 }
	type verdict struct {
		v   contentseen.Verdict
		err error
	}
	got := make(chan verdict, 1)
	go func() {
		v, err := judgeLookupClaim(ctx, w2, copyA, isCopy)
		got <- verdict{v, err}
	}()
	select {
	case <-cut.paused:
	case r := <-got:
		t.Fatalf("copy of A judged without a look-up script: %+v, %v", r.v, r.err)
	}
	srv.Kill()
	if err := os.Truncate(aof, size); err != nil {
		t.Fatal(err)
	}
	srv.Restart()
	close(cut.resume)

	// Worker 1 replays A within the window, as its heal loop does, once a
	// script noticed the restart (worker 2's next claim).
	var r verdict
	for healed := false; ; {
		select {
		case r = <-got:
		case <-time.After(5 * time.Millisecond):
			if healed {
				continue
			}
			if g, err := w1.rdb.HGet(ctx, w1.keys.meta, "gen").Int64(); err == nil && g != w1.heal.gen {
				if h, err := w1.Heal(ctx); err != nil || h.Restarts != 1 || h.Late != 0 {
					t.Fatalf("worker 1: Heal = %+v, %v, want one restart, replayed in time", h, err)
				}
				healed = true
			}
			continue
		}
		break
	}
	if r.err != nil || r.v.Copy == nil || r.v.Copy.ID != a.ID {
		t.Fatalf("copy of A whose look-up a restart cut: %+v, %v; want a copy of %s", r.v, r.err, a.ID)
	}
	if n, p := checkConsistent(t, w1); n != 2 || p != 0 {
		t.Errorf("index holds %d entries, %d pending, want 2 (the page before T and A), 0", n, p)
	}
}

// pauseAfterLookupClaim is a client hook that, once armed, pauses the
// first lookupClaimScript call after its reply came: it closes paused and
// waits for resume (the test restarts the server meanwhile) or the end of
// the call's context.
type pauseAfterLookupClaim struct {
	armed          atomic.Bool
	paused, resume chan struct{}
}

func (h *pauseAfterLookupClaim) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *pauseAfterLookupClaim) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		args := cmd.Args()
		if len(args) > 1 && cmd.Name() == "evalsha" && args[1] == lookupClaimScript.Hash() && h.armed.CompareAndSwap(true, false) {
			close(h.paused)
			select {
			case <-h.resume:
			case <-ctx.Done(): // the test ended early
			}
		}
		return err
	}
}

func (h *pauseAfterLookupClaim) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
