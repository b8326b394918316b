package contentseentest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/simcrawl/simcrawl/contentseen"
)

// lookupClaimers returns open's clients as LookupClaimers, or skips t when
// the index is none.
func lookupClaimers(t *testing.T, open Open, o contentseen.SharedOptions, n int) []contentseen.LookupClaimer {
	t.Helper()
	var out []contentseen.LookupClaimer
	for _, s := range open(t, o, n) {
		lc, ok := s.(contentseen.LookupClaimer)
		if !ok {
			t.Skipf("%T is no contentseen.LookupClaimer", s)
		}
		out = append(out, lc)
	}
	return out
}

func lookupClaim(t *testing.T, s contentseen.LookupClaimer, e contentseen.Entry) contentseen.LookupClaimed {
	t.Helper()
	lc, err := s.LookupClaim(context.Background(), e, s.K())
	if err != nil {
		t.Fatalf("LookupClaim(%s): %v", e.Fingerprint, err)
	}
	return lc
}

// LookupClaim claims a new page and a near one in the look-up's step,
// returning the entries before it as candidates; it claims nothing for a
// page whose digest is live, whose token then claims as Claim does; the
// same call again returns its claim; and its claims confirm and release
// like any other.
func testLookupClaim(t *testing.T, open Open) {
	ctx := context.Background()
	cs := lookupClaimers(t, open, opts(3), 2)
	a, b := cs[0], cs[1]
	fp := contentseen.Fingerprint(0x0badc0ffee123456)
	first := Entry("a/1", fp, 1)
	lc := lookupClaim(t, a, first)
	if lc.Seq == 0 || len(lc.Candidates) != 0 {
		t.Fatalf("LookupClaim on an empty index = seq %d, candidates %v, want claimed, none", lc.Seq, seqs(lc.Candidates))
	}
	es, _ := lookup(t, b, fp, [16]byte{})
	if len(es) != 1 || es[0].Seq != lc.Seq || !es[0].Pending || same(es[0], first) != "" {
		t.Fatalf("Lookup after LookupClaim = %v, want pending seq %d", seqs(es), lc.Seq)
	}
	if again := lookupClaim(t, a, first); again.Seq != lc.Seq || len(again.Candidates) != 0 {
		t.Fatalf("LookupClaim of the same entry again = seq %d, candidates %v, want seq %d, none (a retried call)",
			again.Seq, seqs(again.Candidates), lc.Seq)
	}
	// A near page on the other client sees the first, pending, and is claimed.
	near := Entry("b/1", fp^0b1011, 2)
	ln := lookupClaim(t, b, near)
	if ln.Seq <= lc.Seq || len(ln.Candidates) != 1 || ln.Candidates[0].Seq != lc.Seq || !ln.Candidates[0].Pending ||
		ln.Candidates[0].Distance != 3 {
		t.Fatalf("LookupClaim of a near page = seq %d, candidates %v, want a seq after %d, the first pending at distance 3",
			ln.Seq, seqs(ln.Candidates), lc.Seq)
	}
	// Within a radius below the distance the first is no candidate; the
	// page is claimed all the same.
	narrow := Entry("b/3", fp^0b111, 5)
	lr, err := b.LookupClaim(ctx, narrow, 2)
	if err != nil || lr.Seq == 0 || len(lr.Candidates) != 1 || lr.Candidates[0].Seq != ln.Seq {
		t.Fatalf("LookupClaim within 2 of pages at 3 and 2 = %+v, %v, want claimed, only seq %d (at 2) a candidate", lr, err, ln.Seq)
	}
	if err := b.Release(ctx, lr.Seq, narrow.ID); err != nil {
		t.Fatal(err)
	}
	if err := a.Confirm(ctx, lc.Seq, first.ID); err != nil {
		t.Fatalf("Confirm of a LookupClaim: %v", err)
	}
	if err := b.Release(ctx, ln.Seq, near.ID); err != nil {
		t.Fatalf("Release of a LookupClaim: %v", err)
	}
	es, _ = lookup(t, a, fp, [16]byte{})
	if len(es) != 1 || es[0].Seq != lc.Seq || es[0].Pending {
		t.Fatalf("Lookup after Confirm and Release = %v, want committed seq %d only", seqs(es), lc.Seq)
	}
	// An exact copy far away: nothing claimed, the digest's entry returned.
	exact := Entry("b/2", ^fp, 3)
	exact.Digest = first.Digest
	lx := lookupClaim(t, b, exact)
	if lx.Seq != 0 || len(lx.Candidates) != 1 || lx.Candidates[0].Seq != lc.Seq || lx.Candidates[0].Distance != 64 {
		t.Fatalf("LookupClaim of an exact copy = seq %d, candidates %v, want nothing claimed, seq %d at 64", lx.Seq, seqs(lx.Candidates), lc.Seq)
	}
	// Its token claims as a Lookup's does: the caller judged it no copy.
	c, err := b.Claim(ctx, exact, lx.Token)
	if err != nil || len(c.Conflicts) != 0 || c.Seq <= ln.Seq {
		t.Fatalf("Claim with LookupClaim's token = %+v, %v, want claimed", c, err)
	}
	// A page near a claim made after the token conflicts with it.
	later := Entry("a/2", ^fp^1, 4)
	lt, err := a.Claim(ctx, later, lx.Token)
	if err != nil || lt.Seq != 0 || len(lt.Conflicts) != 1 || lt.Conflicts[0].Seq != c.Seq {
		t.Fatalf("Claim near a claim after the token = %+v, %v, want a conflict with seq %d", lt, err, c.Seq)
	}
	bad := Entry("a/3", 5, 5)
	bad.URL = string(make([]byte, contentseen.MaxEntryText))
	if _, err := a.LookupClaim(ctx, bad, a.K()); err == nil {
		t.Fatal("LookupClaim of an entry with a huge URL: no error")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.LookupClaim(ctx, first, a.K()); !errors.Is(err, contentseen.ErrClosed) {
		t.Fatalf("LookupClaim after Close = %v, want ErrClosed", err)
	}
}

// judgeClaim is a judge of testConcurrent through JudgeClaim: a Wait is
// judged again with Rejudge (the winner confirms at once), and a Copy
// verdict's claim is released, as the crawler does.
func judgeClaim(ctx context.Context, s contentseen.Shared, e contentseen.Entry, isCopy func(contentseen.Entry) bool) (contentseen.Verdict, error) {
	lc, ok := s.(contentseen.LookupClaimer)
	if !ok {
		return contentseen.Verdict{}, errors.New("not a contentseen.LookupClaimer")
	}
	v, err := contentseen.JudgeClaim(ctx, lc, e, s.K(), isCopy)
	for err == nil && v.Wait != nil {
		v, err = contentseen.Rejudge(ctx, lc, e, v, isCopy)
	}
	if err != nil || v.Copy == nil || v.Seq == 0 {
		return v, err
	}
	if err := s.Release(ctx, v.Seq, e.ID); err != nil {
		return v, err
	}
	v.Seq = 0
	return v, nil
}

// A near copy of a pending page waits holding its claim; Rejudge drops it
// as a copy once that page is confirmed, keeps it waiting while it is
// pending, and stores it once that page is released: judged again from
// the start, under a new claim, its old one released (a pending entry
// gone may live on under another seq after a Redis restart).
// An exact copy of a pending page waits without a claim and claims once
// that page is released. Entries reads the entries as they are now.
func testRejudge(t *testing.T, open Open) {
	ctx := context.Background()
	cs := lookupClaimers(t, open, opts(3), 2)
	a, b := cs[0], cs[1]
	isCopy := func(contentseen.Entry) bool { return true }
	for i, confirm := range []bool{true, false} {
		fp := contentseen.Fingerprint(0x1122334455667788 * uint64(i+1))
		orig, cp := Entry(fmt.Sprint("a/", i), fp, uint64(10*i)), Entry(fmt.Sprint("b/", i), fp^0b11, uint64(10*i+1))
		lo := lookupClaim(t, a, orig)
		v, err := contentseen.JudgeClaim(ctx, b, cp, 3, isCopy)
		if err != nil || v.Wait == nil || v.Wait.Seq != lo.Seq || v.Seq <= lo.Seq {
			t.Fatalf("JudgeClaim of a copy of a pending page = %+v, %v, want Wait for seq %d, holding a later claim", v, err, lo.Seq)
		}
		held := v.Seq
		if v, err = contentseen.Rejudge(ctx, b, cp, v, isCopy); err != nil || v.Wait == nil || v.Seq != held {
			t.Fatalf("Rejudge while the page is pending = %+v, %v, want Wait holding seq %d", v, err, held)
		}
		es, err := b.Entries(ctx, []uint64{held, lo.Seq, held + 1000})
		if err != nil || len(es) != 2 || es[0].Seq != lo.Seq || es[1].Seq != held || !es[0].Pending || same(es[0], orig) != "" {
			t.Fatalf("Entries = %v, %v, want the two pending claims %d and %d in order", seqs(es), err, lo.Seq, held)
		}
		if confirm {
			if err := a.Confirm(ctx, lo.Seq, orig.ID); err != nil {
				t.Fatal(err)
			}
			v, err = contentseen.Rejudge(ctx, b, cp, v, isCopy)
			if err != nil || v.Copy == nil || v.Copy.Seq != lo.Seq || v.Copy.Pending || v.Seq != held {
				t.Fatalf("Rejudge after the page's confirm = %+v, %v, want a copy of committed seq %d, holding claim %d", v, err, lo.Seq, held)
			}
			if err := b.Release(ctx, held, cp.ID); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := a.Release(ctx, lo.Seq, orig.ID); err != nil {
			t.Fatal(err)
		}
		v, err = contentseen.Rejudge(ctx, b, cp, v, isCopy)
		if err != nil || v.Copy != nil || v.Wait != nil || v.Seq <= held {
			t.Fatalf("Rejudge after the page's release = %+v, %v, want a new claim after %d", v, err, held)
		}
		es, _ = lookup(t, a, fp, [16]byte{})
		if len(es) != 1 || es[0].Seq != v.Seq || !es[0].Pending {
			t.Fatalf("Lookup = %v, want only the copy's new pending claim %d (%d released)", seqs(es), v.Seq, held)
		}
	}
	// An exact copy waits without a claim, and claims after the release.
	orig := Entry("a/x", 0x0f0f0f0f0f0f0f0f, 100)
	ex := Entry("b/x", ^orig.Fingerprint, 101)
	ex.Digest = orig.Digest
	lo := lookupClaim(t, a, orig)
	v, err := contentseen.JudgeClaim(ctx, b, ex, 3, isCopy)
	if err != nil || v.Wait == nil || v.Wait.Seq != lo.Seq || v.Seq != 0 {
		t.Fatalf("JudgeClaim of an exact copy of a pending page = %+v, %v, want Wait for %d, no claim", v, err, lo.Seq)
	}
	if err := a.Release(ctx, lo.Seq, orig.ID); err != nil {
		t.Fatal(err)
	}
	v, err = contentseen.Rejudge(ctx, b, ex, v, isCopy)
	if err != nil || v.Copy != nil || v.Wait != nil || v.Seq <= lo.Seq {
		t.Fatalf("Rejudge of the exact copy after the release = %+v, %v, want claimed", v, err)
	}
}
