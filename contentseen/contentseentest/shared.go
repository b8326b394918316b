package contentseentest

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/simcrawl/simcrawl/contentseen"
)

// Open returns n clients of one new, empty Shared index made with o (the
// same value n times for an in-process index). It registers their Close
// with t.Cleanup; the suite may close them itself first (ErrClosed from
// Close is then ignored by a cleanup that wants to).
type Open func(t testing.TB, o contentseen.SharedOptions, n int) []contentseen.Shared

// RunShared runs the contract tests of contentseen.Shared on open's
// indexes. The oracle uses seeds printed on failure.
func RunShared(t *testing.T, open Open) {
	t.Run("ClaimConfirmLookup", func(t *testing.T) { testClaimConfirm(t, open) })
	t.Run("ConflictAfterToken", func(t *testing.T) { testConflict(t, open) })
	t.Run("Digest", func(t *testing.T) { testDigest(t, open) })
	t.Run("Release", func(t *testing.T) { testRelease(t, open) })
	t.Run("LeaseExpires", func(t *testing.T) { testLease(t, open) })
	t.Run("StaleToken", func(t *testing.T) { testStale(t, open) })
	t.Run("BadInput", func(t *testing.T) { testBadInput(t, open) })
	t.Run("Oracle", func(t *testing.T) { testOracle(t, open) })
	t.Run("ConcurrentCopies", func(t *testing.T) { testConcurrent(t, open, contentseen.Judge, true) })
	t.Run("ConcurrentDistinct", func(t *testing.T) { testConcurrent(t, open, contentseen.Judge, false) })
	t.Run("LookupClaim", func(t *testing.T) { testLookupClaim(t, open) })
	t.Run("Rejudge", func(t *testing.T) { testRejudge(t, open) })
	t.Run("ConcurrentCopiesLookupClaim", func(t *testing.T) { testConcurrent(t, open, judgeClaim, true) })
	t.Run("ConcurrentDistinctLookupClaim", func(t *testing.T) { testConcurrent(t, open, judgeClaim, false) })
	t.Run("Close", func(t *testing.T) { testClose(t, open) })
}

// Entry returns a page entry with a sketch and digest derived from seed.
func Entry(id string, fp contentseen.Fingerprint, seed uint64) contentseen.Entry {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	e := contentseen.Entry{ID: id, URL: "https://example.test/" + id, Fingerprint: fp}
	for i := range e.Digest {
		e.Digest[i] = byte(r.Uint32())
	}
	e.Sketch.Size = r.Uint32N(5000) + 1
	for i := range e.Sketch.Bins {
		e.Sketch.Bins[i] = byte(r.Uint32())
	}
	return e
}

func opts(k int) contentseen.SharedOptions {
	return contentseen.SharedOptions{Layout: contentseen.DefaultLayout(), K: k}
}

// claim claims e with tok and fails unless it was inserted.
func claim(t testing.TB, s contentseen.Shared, e contentseen.Entry, tok contentseen.Token) contentseen.Claimed {
	t.Helper()
	c, err := s.Claim(context.Background(), e, tok)
	if err != nil {
		t.Fatalf("Claim(%s, %d): %v", e.Fingerprint, tok, err)
	}
	if c.Seq == 0 || len(c.Conflicts) > 0 {
		t.Fatalf("Claim(%s, %d) = seq %d, %d conflicts, want inserted", e.Fingerprint, tok, c.Seq, len(c.Conflicts))
	}
	return c
}

func lookup(t testing.TB, s contentseen.Shared, fp contentseen.Fingerprint, d [16]byte) ([]contentseen.Entry, contentseen.Token) {
	t.Helper()
	es, tok, err := s.Lookup(context.Background(), fp, d)
	if err != nil {
		t.Fatalf("Lookup(%s): %v", fp, err)
	}
	return es, tok
}

// same reports how entry got differs from want in the fields the index
// stores, or "".
func same(got, want contentseen.Entry) string {
	switch {
	case got.ID != want.ID || got.URL != want.URL:
		return fmt.Sprintf("id/url %q %q, want %q %q", got.ID, got.URL, want.ID, want.URL)
	case got.Fingerprint != want.Fingerprint:
		return fmt.Sprintf("fingerprint %s, want %s", got.Fingerprint, want.Fingerprint)
	case got.Digest != want.Digest:
		return fmt.Sprintf("digest %x, want %x", got.Digest, want.Digest)
	case got.Sketch != want.Sketch:
		return "sketch differs"
	}
	return ""
}

func testClaimConfirm(t *testing.T, open Open) {
	ctx := context.Background()
	s := open(t, opts(3), 1)[0]
	fp := contentseen.Fingerprint(0x0123456789abcdef)
	e := Entry("w1/1", fp, 1)
	if es, _ := lookup(t, s, fp, e.Digest); len(es) != 0 {
		t.Fatalf("Lookup on an empty index = %d entries", len(es))
	}
	_, tok := lookup(t, s, fp, e.Digest)
	c := claim(t, s, e, tok)
	near := fp ^ 0b101 // distance 2
	es, _ := lookup(t, s, near, [16]byte{})
	if len(es) != 1 {
		t.Fatalf("Lookup after Claim = %d entries, want 1", len(es))
	}
	got := es[0]
	if d := same(got, e); d != "" {
		t.Fatalf("pending entry: %s", d)
	}
	if !got.Pending || got.Seq != c.Seq || got.Distance != 2 || got.Deadline.IsZero() {
		t.Fatalf("pending entry: Pending %v Seq %d (claim %d) Distance %d Deadline %v, want pending, same seq, 2, a deadline",
			got.Pending, got.Seq, c.Seq, got.Distance, got.Deadline)
	}
	if err := s.Confirm(ctx, c.Seq, e.ID); err != nil {
		t.Fatalf("Confirm: %v", err)
	}
	if err := s.Confirm(ctx, c.Seq, e.ID); err != nil {
		t.Fatalf("Confirm again: %v, want nil (idempotent)", err)
	}
	es, _ = lookup(t, s, near, [16]byte{})
	if len(es) != 1 || es[0].Pending || !es[0].Deadline.IsZero() || same(es[0], e) != "" {
		t.Fatalf("Lookup after Confirm = %+v, want the committed entry", es)
	}
	// Distance K+1 is outside the radius.
	if es, _ := lookup(t, s, fp^0xf000, [16]byte{}); len(es) != 0 {
		t.Fatalf("Lookup at distance 4 with K=3 = %d entries, want 0", len(es))
	}
	// A second entry farther away sorts after the first.
	_, tok = lookup(t, s, fp^0xe0000000, [16]byte{})
	c2 := claim(t, s, Entry("w2/1", fp^0x3<<40, 2), tok)
	es, _ = lookup(t, s, fp^0x3<<40, [16]byte{})
	if len(es) != 2 || es[0].Seq != c2.Seq || es[0].Distance != 0 || es[1].Seq != c.Seq || es[1].Distance != 2 {
		t.Fatalf("Lookup of two = %v, want seq %d at distance 0 then %d at 2", seqs(es), c2.Seq, c.Seq)
	}
	es, _ = lookup(t, s, fp^1<<40, [16]byte{})
	if len(es) != 2 || es[0].Seq != c.Seq || es[1].Seq != c2.Seq {
		t.Fatalf("Lookup of two at distance 1 = %v, want seq %d then %d (ties by seq)", seqs(es), c.Seq, c2.Seq)
	}
	if c2.Seq <= c.Seq {
		t.Fatalf("second claim seq %d <= first %d", c2.Seq, c.Seq)
	}
}

func seqs(es []contentseen.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, fmt.Sprintf("%d@%d", e.Seq, e.Distance))
	}
	return out
}

// Two workers look up at the same moment and both claim near copies: the
// second claim sees the first; claiming again with the conflict's token
// (the caller judged it not a copy) inserts.
func testConflict(t *testing.T, open Open) {
	cs := open(t, opts(3), 2)
	a, b := cs[0], cs[1]
	fp := contentseen.Fingerprint(0xfeedface12345678)
	ea, eb := Entry("a/1", fp, 1), Entry("b/1", fp^0b111, 2)
	_, tokA := lookup(t, a, ea.Fingerprint, ea.Digest)
	_, tokB := lookup(t, b, eb.Fingerprint, eb.Digest)
	ca := claim(t, a, ea, tokA)
	cb, err := b.Claim(context.Background(), eb, tokB)
	if err != nil {
		t.Fatal(err)
	}
	if cb.Seq != 0 || len(cb.Conflicts) != 1 || cb.Conflicts[0].Seq != ca.Seq || cb.Conflicts[0].Distance != 3 ||
		!cb.Conflicts[0].Pending || same(cb.Conflicts[0], ea) != "" {
		t.Fatalf("second Claim = seq %d conflicts %v, want not inserted, conflict seq %d at distance 3, pending", cb.Seq, seqs(cb.Conflicts), ca.Seq)
	}
	// A claim far away with the old token does not conflict.
	claim(t, b, Entry("b/2", ^fp, 3), tokB)
	cb2 := claim(t, b, eb, cb.Token)
	es, _ := lookup(t, a, fp, [16]byte{})
	if len(es) != 2 || es[0].Seq != ca.Seq || es[1].Seq != cb2.Seq {
		t.Fatalf("Lookup = %v, want %d then %d", seqs(es), ca.Seq, cb2.Seq)
	}
}

func testDigest(t *testing.T, open Open) {
	s := open(t, opts(3), 1)[0]
	fp := contentseen.Fingerprint(0x00ff00ff00ff00ff)
	e := Entry("w/1", fp, 7)
	_, tok := lookup(t, s, fp, e.Digest)
	c := claim(t, s, e, tok)
	far := ^fp
	es, _ := lookup(t, s, far, e.Digest)
	if len(es) != 1 || es[0].Seq != c.Seq || es[0].Distance != 64 {
		t.Fatalf("Lookup by digest at distance 64 = %v, want seq %d at 64", seqs(es), c.Seq)
	}
	// A claim with the same digest far away conflicts.
	other := Entry("w/2", far, 8)
	other.Digest = e.Digest
	cl, err := s.Claim(context.Background(), other, tok)
	if err != nil {
		t.Fatal(err)
	}
	if cl.Seq != 0 || len(cl.Conflicts) != 1 || cl.Conflicts[0].Seq != c.Seq {
		t.Fatalf("Claim with the same digest = seq %d conflicts %v, want the first", cl.Seq, seqs(cl.Conflicts))
	}
	// The zero digest matches nothing.
	z1, z2 := Entry("w/3", 0x1111111111111111, 9), Entry("w/4", 0x2222222222222222, 10)
	z1.Digest, z2.Digest = [16]byte{}, [16]byte{}
	_, tok = lookup(t, s, z1.Fingerprint, z1.Digest)
	claim(t, s, z1, tok)
	claim(t, s, z2, tok)
	if es, _ := lookup(t, s, 0x4444444444444444, [16]byte{}); len(es) != 0 {
		t.Fatalf("Lookup with the zero digest far from all = %v, want none", seqs(es))
	}
}

func testRelease(t *testing.T, open Open) {
	ctx := context.Background()
	s := open(t, opts(3), 1)[0]
	e := Entry("w/1", 0x1234, 1)
	_, tok := lookup(t, s, e.Fingerprint, e.Digest)
	c := claim(t, s, e, tok)
	if err := s.Release(ctx, c.Seq, e.ID); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := s.Release(ctx, c.Seq, e.ID); err != nil {
		t.Fatalf("Release again: %v, want nil", err)
	}
	if es, _ := lookup(t, s, e.Fingerprint, e.Digest); len(es) != 0 {
		t.Fatalf("Lookup after Release = %v, want none", seqs(es))
	}
	if err := s.Confirm(ctx, c.Seq, e.ID); !errors.Is(err, contentseen.ErrLeaseLost) {
		t.Fatalf("Confirm after Release = %v, want ErrLeaseLost", err)
	}
	// The released claim does not conflict with a claim made with the old token.
	e2 := Entry("w/2", e.Fingerprint, 2)
	c2 := claim(t, s, e2, tok)
	// Another ID does not confirm or release it.
	if err := s.Confirm(ctx, c2.Seq, e.ID); !errors.Is(err, contentseen.ErrLeaseLost) {
		t.Fatalf("Confirm with another ID = %v, want ErrLeaseLost", err)
	}
	if err := s.Release(ctx, c2.Seq, e.ID); err != nil {
		t.Fatalf("Release with another ID = %v, want nil (not ours)", err)
	}
	if err := s.Confirm(ctx, c2.Seq, e2.ID); err != nil {
		t.Fatal(err)
	}
	if es, _ := lookup(t, s, e.Fingerprint, [16]byte{}); len(es) != 1 || es[0].Seq != c2.Seq || es[0].Pending {
		t.Fatalf("Lookup after Confirm = %v, want committed seq %d", seqs(es), c2.Seq)
	}
	if err := s.Release(ctx, c2.Seq, e2.ID); !errors.Is(err, contentseen.ErrCommitted) {
		t.Fatalf("Release of a committed entry = %v, want ErrCommitted", err)
	}
}

// waitPast waits until the clock passes d (a lease's end). It waits on the
// clock itself, not for another goroutine.
func waitPast(d time.Time) {
	for time.Now().Before(d) {
		time.Sleep(time.Until(d) + time.Millisecond)
	}
}

func testLease(t *testing.T, open Open) {
	ctx := context.Background()
	o := opts(3)
	o.Lease = 50 * time.Millisecond
	cs := open(t, o, 2)
	a, b := cs[0], cs[1]
	fp := contentseen.Fingerprint(0xabcdef0123456789)
	dead, live := Entry("dead/1", fp, 1), Entry("live/1", fp^1, 2)
	_, tok := lookup(t, a, fp, dead.Digest)
	cd := claim(t, a, dead, tok)
	es, _ := lookup(t, b, fp, [16]byte{})
	if len(es) != 1 || !es[0].Pending {
		t.Fatalf("Lookup before the lease ends = %v, want the pending entry", seqs(es))
	}
	waitPast(es[0].Deadline.Add(5 * time.Millisecond))
	// Worker a died before its store committed: its entry is ignored...
	if es, _ := lookup(t, b, fp, dead.Digest); len(es) != 0 {
		t.Fatalf("Lookup after the lease ended = %v, want none", seqs(es))
	}
	// ...and a copy claimed with a token from before a's claim is stored.
	cl := claim(t, b, live, tok)
	if err := b.Confirm(ctx, cl.Seq, live.ID); err != nil {
		t.Fatal(err)
	}
	// The claim purged a's entry: a late Confirm says so.
	if err := a.Confirm(ctx, cd.Seq, dead.ID); !errors.Is(err, contentseen.ErrLeaseLost) {
		t.Fatalf("Confirm after the lease ended and a claim = %v, want ErrLeaseLost", err)
	}
	es, _ = lookup(t, a, fp, dead.Digest)
	if len(es) != 1 || es[0].Seq != cl.Seq || es[0].Pending {
		t.Fatalf("Lookup = %v, want only the committed seq %d", seqs(es), cl.Seq)
	}
	// A committed entry outlives any lease.
	waitPast(time.Now().Add(o.Lease + 5*time.Millisecond))
	claim(t, b, Entry("far/1", ^fp, 3), cl.Token)
	if es, _ := lookup(t, a, fp, [16]byte{}); len(es) != 1 {
		t.Fatalf("committed entry lost after a lease: %v", seqs(es))
	}
}

func testStale(t *testing.T, open Open) {
	o := opts(3)
	o.MaxLag = 8
	s := open(t, o, 1)[0]
	r := rand.New(rand.NewPCG(1, 2))
	_, tok0 := lookup(t, s, 0, [16]byte{})
	tok := tok0
	for i := range 9 {
		tok = claim(t, s, Entry(fmt.Sprint("w/", i), contentseen.Fingerprint(r.Uint64()), uint64(i)), tok).Token
	}
	_, err := s.Claim(context.Background(), Entry("w/x", 0x77, 99), tok0)
	if !errors.Is(err, contentseen.ErrStaleToken) {
		t.Fatalf("Claim 9 claims behind with MaxLag 8 = %v, want ErrStaleToken", err)
	}
	claim(t, s, Entry("w/y", 0x77, 99), contentseen.Token(uint64(tok)-8))
}

func testBadInput(t *testing.T, open Open) {
	s := open(t, opts(3), 1)[0]
	e := Entry("w/1", 1, 1)
	e.URL = string(make([]byte, contentseen.MaxEntryText))
	if _, err := s.Claim(context.Background(), e, 0); err == nil {
		t.Fatal("Claim of an entry with a huge URL: no error")
	}
	if c, err := s.Claim(context.Background(), Entry("w/2", 2, 2), 1<<40); !errors.Is(err, contentseen.ErrStaleToken) {
		t.Fatalf("Claim with a token from the future = %+v, %v, want ErrStaleToken", c, err)
	}
}

func testClose(t *testing.T, open Open) {
	s := open(t, opts(3), 1)[0]
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	ctx := context.Background()
	if _, _, err := s.Lookup(ctx, 1, [16]byte{}); !errors.Is(err, contentseen.ErrClosed) {
		t.Errorf("Lookup after Close = %v, want ErrClosed", err)
	}
	if _, err := s.Claim(ctx, Entry("w/1", 1, 1), 0); !errors.Is(err, contentseen.ErrClosed) {
		t.Errorf("Claim after Close = %v, want ErrClosed", err)
	}
	if err := s.Confirm(ctx, 1, "w/1"); !errors.Is(err, contentseen.ErrClosed) {
		t.Errorf("Confirm after Close = %v, want ErrClosed", err)
	}
	if err := s.Close(); !errors.Is(err, contentseen.ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
}

// testOracle claims random entries in clusters (some confirmed, some left
// pending, some released) and compares Lookup with a linear scan of the
// live entries, for radii 0..7 of the default layout (multi-probe above 3).
func testOracle(t *testing.T, open Open) {
	for _, k := range []int{0, 1, 3, 5, 7} { // the crawler asks for up to 7
		t.Run(fmt.Sprint("k=", k), func(t *testing.T) {
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			r := rand.New(rand.NewPCG(seed, uint64(k)))
			s := open(t, opts(k), 1)[0]
			ctx := context.Background()
			var live []contentseen.Entry
			_, tok := lookup(t, s, 0, [16]byte{})
			var centres []contentseen.Fingerprint
			for i := range 400 {
				var fp contentseen.Fingerprint
				if i%4 == 0 || len(centres) == 0 {
					fp = contentseen.Fingerprint(r.Uint64())
					centres = append(centres, fp)
				} else {
					fp = flip(r, centres[r.IntN(len(centres))], r.IntN(k+3))
				}
				e := Entry(fmt.Sprintf("w/%d", i), fp, r.Uint64())
				if i%5 == 0 {
					e.Digest = [16]byte{} // thin: no digest
				}
				if i%7 == 3 && len(live) > 0 {
					e.Digest = live[r.IntN(len(live))].Digest // an exact copy's digest
				}
				c := claim(t, s, e, tok)
				tok = c.Token
				e.Seq = c.Seq
				switch i % 10 {
				case 0, 1, 2, 3, 4, 5, 6:
					if err := s.Confirm(ctx, c.Seq, e.ID); err != nil {
						t.Fatal(err)
					}
					live = append(live, e)
				case 7, 8:
					e.Pending = true
					live = append(live, e)
				case 9:
					if err := s.Release(ctx, c.Seq, e.ID); err != nil {
						t.Fatal(err)
					}
				}
			}
			for q := range 300 {
				var fp contentseen.Fingerprint
				var d [16]byte
				base := live[r.IntN(len(live))]
				switch q % 3 {
				case 0:
					fp = flip(r, base.Fingerprint, r.IntN(k+2)) // planted neighbour at 0..k+1
				case 1:
					fp = contentseen.Fingerprint(r.Uint64())
					d = base.Digest
				case 2:
					fp = flip(r, base.Fingerprint, k+1+r.IntN(3))
				}
				got, _ := lookup(t, s, fp, d)
				want := scan(live, fp, d, k)
				if fmt.Sprint(seqs(got)) != fmt.Sprint(seqs(want)) {
					t.Fatalf("seed %d: Lookup(%s, k=%d) = %v, want %v", seed, fp, k, seqs(got), seqs(want))
				}
				for i := range got {
					if d := same(got[i], want[i]); d != "" || got[i].Pending != want[i].Pending {
						t.Fatalf("seed %d: entry %d: %s (pending %v, want %v)", seed, got[i].Seq, d, got[i].Pending, want[i].Pending)
					}
				}
			}
		})
	}
}

// flip returns fp with n distinct random bits flipped.
func flip(r *rand.Rand, fp contentseen.Fingerprint, n int) contentseen.Fingerprint {
	var m uint64
	for bits.OnesCount64(m) < n {
		m |= 1 << r.IntN(64)
	}
	return fp ^ contentseen.Fingerprint(m)
}

// scan is the oracle: the live entries within k of fp or with digest d.
func scan(live []contentseen.Entry, fp contentseen.Fingerprint, d [16]byte, k int) []contentseen.Entry {
	var out []contentseen.Entry
	for _, e := range live {
		dist := contentseen.Distance(fp, e.Fingerprint)
		if dist <= k || d != ([16]byte{}) && d == e.Digest {
			e.Distance = dist
			out = append(out, e)
		}
	}
	contentseen.SortEntries(out)
	return out
}

// testConcurrent races goroutines over the clients, each judging a page of
// every cluster (fingerprints within K of each other) at the same moment.
// When the pages are copies, exactly one per cluster is claimed; when they
// are not (another article on the same template), every one is. judge is
// contentseen.Judge or judgeClaim.
func testConcurrent(t *testing.T, open Open, judge func(context.Context, contentseen.Shared, contentseen.Entry, func(contentseen.Entry) bool) (contentseen.Verdict, error), copies bool) {
	const workers, clusters = 6, 12
	k := 3
	cs := open(t, opts(k), 2)
	r := rand.New(rand.NewPCG(3, 4))
	centres := make([]contentseen.Fingerprint, clusters)
	for i := range centres {
		centres[i] = contentseen.Fingerprint(r.Uint64())
	}
	pages := make([][]contentseen.Entry, workers)
	for w := range pages {
		for c := range clusters {
			e := Entry(fmt.Sprintf("w%d/%d", w, c), flip(r, centres[c], 1), uint64(w*clusters+c))
			pages[w] = append(pages[w], e)
		}
	}
	clusterOf := func(e contentseen.Entry) int {
		for c, fp := range centres {
			if contentseen.Distance(fp, e.Fingerprint) <= 1 {
				return c
			}
		}
		return -1
	}
	var mu sync.Mutex
	claimed := make([]int, clusters)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	start := make(chan struct{})
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := cs[w%len(cs)]
			<-start
			for c, e := range pages[w] {
				for {
					v, err := judge(context.Background(), s, e, func(contentseen.Entry) bool { return copies })
					if err != nil {
						errs <- err
						return
					}
					if v.Wait != nil {
						if clusterOf(*v.Wait) != c {
							errs <- fmt.Errorf("page of cluster %d waits for an entry of cluster %d", c, clusterOf(*v.Wait))
							return
						}
						continue // the winner confirms at once: look again
					}
					if v.Copy != nil {
						if clusterOf(*v.Copy) != c {
							errs <- fmt.Errorf("page of cluster %d dropped as a copy of cluster %d", c, clusterOf(*v.Copy))
						}
						break
					}
					if err := s.Confirm(context.Background(), v.Seq, e.ID); err != nil {
						errs <- err
						return
					}
					mu.Lock()
					claimed[c]++
					mu.Unlock()
					break
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	want := 1
	if !copies {
		want = workers
	}
	for c, n := range claimed {
		if n != want {
			t.Errorf("cluster %d: %d pages claimed, want %d", c, n, want)
		}
	}
}
