package redisindex

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/contentseen/contentseentest"
	"github.com/simcrawl/simcrawl/internal/redistest"
)

// The case: worker 1 claims, confirms (and would store) page A;
// Redis crashes and comes back without those writes (the append-only
// file cut back to a moment T before them, as an OS crash under
// appendfsync everysec would); worker 2 then judges a copy of A. The copy
// must be dropped as a copy of A, not stored: claims wait for the settle
// window while worker 1 writes A's claim again. Both orders: the copy
// judged before worker 1 noticed the restart, and after. A third worker
// that does not come back within the window (a partition, a stalled
// process) is the limit: a copy of its page judged after the window is
// claimed, and its replay reports itself late. The pages are judged with
// Judge (Lookup, Claim) and with JudgeClaim (LookupClaim), as the crawler
// does.
func TestHealLostClaim(t *testing.T) {
	for _, jn := range []string{"Judge", "JudgeClaim"} {
		judge := judgeLookup
		if jn == "JudgeClaim" {
			judge = judgeLookupClaim
		}
		for _, copyFirst := range []bool{true, false} {
			name := jn + "/heal first"
			if copyFirst {
				name = jn + "/copy judged first"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				testHealLostClaim(t, judge, copyFirst)
			})
		}
	}
}

// judgeFunc judges page e on x.
type judgeFunc func(ctx context.Context, x *Index, e contentseen.Entry, isCopy func(contentseen.Entry) bool) (contentseen.Verdict, error)

func judgeLookup(ctx context.Context, x *Index, e contentseen.Entry, isCopy func(contentseen.Entry) bool) (contentseen.Verdict, error) {
	return contentseen.Judge(ctx, x, e, isCopy)
}

// judgeLookupClaim is contentseen.JudgeClaim, releasing a copy's claim as
// the crawler does.
func judgeLookupClaim(ctx context.Context, x *Index, e contentseen.Entry, isCopy func(contentseen.Entry) bool) (contentseen.Verdict, error) {
	v, err := contentseen.JudgeClaim(ctx, x, e, x.K(), isCopy)
	if err == nil && v.Copy != nil && v.Seq != 0 {
		if err := x.Release(ctx, v.Seq, e.ID); err != nil {
			return v, err
		}
		v.Seq = 0
	}
	return v, err
}

func testHealLostClaim(t *testing.T, judge judgeFunc, copyFirst bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := redistest.Start(t, redistest.WithArgs("--appendfsync", "always"))
	o := Options{Name: newName(), SharedOptions: contentseen.SharedOptions{K: 3}, Settle: 3 * time.Second}
	w1 := open(t, redistest.Client(t, srv.Addr()), o)
	w2 := open(t, redistest.Client(t, srv.Addr()), o)
	w3 := open(t, redistest.Client(t, srv.Addr()), o)
	before := contentseentest.Entry("w1/1", 0x0f0f0f0f0f0f0f0f, 1)
	if v := judgeStore(ctx, t, judge, w1, before); v.Seq == 0 {
		t.Fatalf("page before T: %+v, want claimed", v)
	}
	aof, size := incrAOF(t, srv) // T

	a := contentseentest.Entry("w1/2", 0x1234567812345678, 2)
	if v := judgeStore(ctx, t, judge, w1, a); v.Seq == 0 {
		t.Fatalf("page A: %+v, want claimed", v)
	}
	b := contentseentest.Entry("w3/1", 0x7777000077770000, 3)
	if v := judgeStore(ctx, t, judge, w3, b); v.Seq == 0 {
		t.Fatalf("page B: %+v, want claimed", v)
	}
	srv.Kill()
	if err := os.Truncate(aof, size); err != nil {
		t.Fatal(err)
	}
	srv.Restart()

	// Copies: near (a bit flipped, another digest) and exact (A's digest).
	copyA := contentseentest.Entry("w2/1", a.Fingerprint^1, 20)
	copyA2 := copyA
	copyA2.ID, copyA2.Digest = "w2/2", a.Digest
	copyB := contentseentest.Entry("w2/3", b.Fingerprint^2, 30)
	isCopy := func(e contentseen.Entry) func(contentseen.Entry) bool {
		return func(c contentseen.Entry) bool { return contentseen.Distance(c.Fingerprint, e.Fingerprint) <= 3 }
	}
	type verdict struct {
		v   contentseen.Verdict
		err error
	}
	got := make(chan verdict, 1)
	if copyFirst {
		go func() {
			v, err := judge(ctx, w2, copyA, isCopy(a))
			got <- verdict{v, err}
		}()
		waitRestartSeen(ctx, t, w1) // worker 2's claim started the window
	}
	h, err := w1.Heal(ctx)
	if err != nil || h != (contentseen.Healed{Restarts: 1, Replayed: 1}) {
		t.Fatalf("worker 1: Heal = %+v, %v, want one restart, A replayed in time", h, err)
	}
	if !copyFirst {
		v, err := judge(ctx, w2, copyA, isCopy(a))
		got <- verdict{v, err}
	}
	r := <-got
	if r.err != nil || r.v.Copy == nil || r.v.Copy.ID != a.ID || r.v.Copy.Pending {
		t.Fatalf("copy of A judged after the restart: %+v, %v; want a copy of %s", r.v, r.err, a.ID)
	}
	v, err := judge(ctx, w2, copyA2, isCopy(a))
	if err != nil || v.Copy == nil || v.Copy.ID != a.ID {
		t.Fatalf("exact copy of A: %+v, %v; want a copy of %s", v, err, a.ID)
	}

	// Worker 3 did not heal within the window: B is gone, its copy claimed.
	waitSettled(ctx, t, w2)
	v, err = judge(ctx, w2, copyB, isCopy(b))
	if err != nil || v.Seq == 0 {
		t.Fatalf("copy of B, whose worker did not replay in time: %+v, %v; want claimed (the limit)", v, err)
	}
	if h, err := w3.Heal(ctx); err != nil || h != (contentseen.Healed{Restarts: 1, Replayed: 1, Late: 1}) {
		t.Fatalf("worker 3: Heal = %+v, %v, want one restart, B replayed late", h, err)
	}
	if h, err := w1.Heal(ctx); err != nil || h != (contentseen.Healed{}) {
		t.Fatalf("worker 1: second Heal = %+v, %v, want nothing", h, err)
	}
	checkConsistent(t, w1)
}

// judgeStore judges e on x with judge and confirms its claim, as a worker
// storing the page does.
func judgeStore(ctx context.Context, t *testing.T, judge judgeFunc, x *Index, e contentseen.Entry) contentseen.Verdict {
	t.Helper()
	v, err := judge(ctx, x, e, func(contentseen.Entry) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	if v.Seq != 0 {
		if err := x.Confirm(ctx, v.Seq, e.ID); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

// waitRestartSeen waits until a script noticed the server's restart (the
// index's generation on the server moved past x's).
func waitRestartSeen(ctx context.Context, t *testing.T, x *Index) {
	t.Helper()
	for {
		g, err := x.rdb.HGet(ctx, x.keys.meta, "gen").Int64()
		if err != nil {
			t.Fatal(err)
		}
		if g != x.heal.gen {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// waitSettled waits for the settle window's end on the server's clock.
func waitSettled(ctx context.Context, t *testing.T, x *Index) {
	t.Helper()
	end, err := x.rdb.HGet(ctx, x.keys.meta, "settle").Int64()
	if err != nil {
		t.Fatal(err)
	}
	for {
		now, err := x.rdb.Time(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		if now.UnixMilli() >= end {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(time.Until(time.UnixMilli(end)) + time.Millisecond):
		}
	}
}

// The worker's first call after a restart that lost its claims is the
// confirm of claims it stored (the crawler's second confirms, one
// pipeline): they are found lost, healed (written again: the pending ones
// pending, the confirmed one committed) and confirmed, each at its new
// seq, with no error for the caller.
func TestHealConfirmBatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := redistest.Start(t, redistest.WithArgs("--appendfsync", "always"))
	o := Options{Name: newName(), SharedOptions: contentseen.SharedOptions{K: 3}, Settle: 200 * time.Millisecond}
	x := open(t, redistest.Client(t, srv.Addr()), o)
	aof, size := incrAOF(t, srv) // T
	var refs []contentseen.ClaimRef
	for i := range 3 {
		e := contentseentest.Entry(fmt.Sprint("w/", i), contentseen.Fingerprint(0xff)<<(12*i), uint64(i))
		v, err := contentseen.Judge(ctx, x, e, func(contentseen.Entry) bool { return false })
		if err != nil || v.Seq == 0 {
			t.Fatalf("Judge %s = %+v, %v", e.ID, v, err)
		}
		refs = append(refs, contentseen.ClaimRef{Seq: v.Seq, ID: e.ID})
	}
	if err := x.Confirm(ctx, refs[0].Seq, refs[0].ID); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	if err := os.Truncate(aof, size); err != nil {
		t.Fatal(err)
	}
	srv.Restart()
	for i, err := range x.ConfirmBatch(ctx, refs) {
		if err != nil {
			t.Errorf("ConfirmBatch after the restart: claim %d: %v", i, err)
		}
	}
	if h, err := x.Heal(ctx); err != nil || h != (contentseen.Healed{Restarts: 1, Replayed: 3}) {
		t.Errorf("Heal = %+v, %v, want one restart, 3 claims replayed in time", h, err)
	}
	for i := range 3 {
		es, _, err := x.Lookup(ctx, contentseen.Fingerprint(0xff)<<(12*i), [16]byte{})
		if err != nil || len(es) != 1 || es[0].ID != refs[i].ID || es[0].Pending || es[0].Seq <= seqJump {
			t.Errorf("Lookup of %s = %+v, %v, want it committed at a seq past the jump", refs[i].ID, es, err)
		}
	}
	if n, p := checkConsistent(t, x); n != 3 || p != 0 {
		t.Errorf("index holds %d entries, %d pending, want 3, 0", n, p)
	}
}

// A server that lost the crawl's keys is not healed into a new index:
// Heal fails with ErrLost and writes nothing, as every call does.
func TestHealLostKeys(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Client(t, sharedAddr)
	x := open(t, rdb, Options{Name: newName(), SharedOptions: contentseen.SharedOptions{K: 3}})
	a := contentseentest.Entry("w/a", 0x1111, 1)
	if v := judgeStore(ctx, t, judgeLookup, x, a); v.Seq == 0 {
		t.Fatalf("Judge a = %+v", v)
	}
	if err := rdb.Del(ctx, x.keys.all...).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Heal(ctx); !errors.Is(err, ErrLost) {
		t.Fatalf("Heal after the keys were lost = %v, want ErrLost", err)
	}
	if n, err := rdb.Exists(ctx, x.keys.all...).Result(); err != nil || n != 0 {
		t.Errorf("%d of the index's keys exist after Heal, %v; want none", n, err)
	}
}

// A copy waiting for a pending page across a restart that lost both
// claims: the page's worker writes its claim again under a new seq and
// confirms it, and the copy's Rejudge, which finds the old seq gone, judges
// it again from the start and drops it as a copy, instead of taking the
// page for released and storing the copy beside it (which a crawl of two
// workers did: TestBackendRedisLostWrites).
func TestHealWaitingCopy(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := redistest.Start(t, redistest.WithArgs("--appendfsync", "always"))
	o := Options{Name: newName(), SharedOptions: contentseen.SharedOptions{K: 3}, Settle: 3 * time.Second}
	w1 := open(t, redistest.Client(t, srv.Addr()), o)
	w2 := open(t, redistest.Client(t, srv.Addr()), o)
	before := contentseentest.Entry("w1/0", 0x0f0f0f0f0f0f0f0f, 1)
	judgeStore(ctx, t, judgeLookupClaim, w1, before)
	aof, size := incrAOF(t, srv) // T

	a := contentseentest.Entry("w1/1", 0x1234567812345678, 2)
	va, err := contentseen.JudgeClaim(ctx, w1, a, 3, func(contentseen.Entry) bool { return false })
	if err != nil || va.Seq == 0 {
		t.Fatalf("page A: %+v, %v, want claimed", va, err)
	}
	copyA := contentseentest.Entry("w2/1", a.Fingerprint^1, 20)
	isCopy := func(c contentseen.Entry) bool { return contentseen.Distance(c.Fingerprint, a.Fingerprint) <= 3 }
	v, err := contentseen.JudgeClaim(ctx, w2, copyA, 3, isCopy)
	if err != nil || v.Wait == nil || v.Wait.Seq != va.Seq || v.Seq == 0 {
		t.Fatalf("copy of pending A: %+v, %v, want Wait for %d holding a claim", v, err, va.Seq)
	}
	srv.Kill()
	if err := os.Truncate(aof, size); err != nil {
		t.Fatal(err)
	}
	srv.Restart()

	for i, w := range []*Index{w1, w2} {
		if h, err := w.Heal(ctx); err != nil || h != (contentseen.Healed{Restarts: 1, Replayed: 1}) {
			t.Fatalf("worker %d: Heal = %+v, %v, want one restart, its claim replayed", i+1, h, err)
		}
	}
	if err := w1.Confirm(ctx, va.Seq, a.ID); err != nil { // A stored: its old seq maps to the new
		t.Fatalf("confirm A after the replay: %v", err)
	}
	v, err = contentseen.Rejudge(ctx, w2, copyA, v, isCopy)
	if err != nil || v.Copy == nil || v.Copy.ID != a.ID || v.Copy.Pending {
		t.Fatalf("copy of A judged again after the restart: %+v, %v; want a copy of committed %s", v, err, a.ID)
	}
	if v.Seq != 0 {
		if err := w2.Release(ctx, v.Seq, copyA.ID); err != nil {
			t.Fatal(err)
		}
	}
	checkConsistent(t, w1)
}
