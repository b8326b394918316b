package redisindex

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/contentseen/contentseentest"
	"github.com/simcrawl/simcrawl/internal/redistest"
)

// Expired pending entries are ignored at once and purged 64 per Claim or
// Confirm, bucket records and digests with them; committed ones stay.
func TestPurgeExpired(t *testing.T) {
	t.Parallel() // an index of its own on the shared server; waits out a 2 s lease
	ctx := context.Background()
	x := open(t, redistest.Client(t, sharedAddr), Options{Name: newName(), SharedOptions: contentseen.SharedOptions{K: 3, Lease: 2 * time.Second}})
	const n = 100
	var tok contentseen.Token
	var last time.Time
	for i := range n {
		e := contentseentest.Entry(fmt.Sprint("w/", i), contentseen.Fingerprint(i)<<8, uint64(i)) // fingerprints 1..8 bits apart
		c, err := x.Claim(ctx, e, tok)
		if err != nil || c.Seq == 0 {
			// Entries within K of each other conflict: claim those with the newest token.
			if c, err = x.Claim(ctx, e, c.Token); err != nil || c.Seq == 0 {
				t.Fatalf("Claim %d = %+v, %v", i, c, err)
			}
		}
		tok = c.Token
		if i == 0 {
			if err := x.Confirm(ctx, c.Seq, e.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The newest claim's lease ends last.
	es, _, err := x.Lookup(ctx, contentseen.Fingerprint(n-1)<<8, [16]byte{})
	if err != nil || len(es) == 0 || es[0].Seq != n || !es[0].Pending {
		t.Fatalf("Lookup of the newest claim = %v, %v, want seq %d pending first", seqs(es), err, n)
	}
	last = es[0].Deadline
	for time.Now().Before(last.Add(5 * time.Millisecond)) {
		time.Sleep(time.Until(last) + 5*time.Millisecond)
	}
	es, _, err = x.Lookup(ctx, 0x300, [16]byte{})
	if err != nil || len(es) != 1 || es[0].Seq != 1 {
		t.Fatalf("Lookup after the leases ended = %v, %v, want only the committed seq 1", seqs(es), err)
	}
	// Claims purged the leases that ended while the loop ran (on a loaded
	// machine); the rest are still there, ignored.
	got, pend := checkConsistent(t, x)
	if got != pend+1 || pend == 0 {
		t.Fatalf("before the purges: %d entries, %d pending, want the committed one and some pending", got, pend)
	}
	if err := x.Confirm(ctx, 1, "w/0"); err != nil { // purges up to 64
		t.Fatal(err)
	}
	want := max(0, pend-64)
	if got, p := checkConsistent(t, x); got != want+1 || p != want {
		t.Fatalf("after one purge: %d entries, %d pending, want %d, %d", got, p, want+1, want)
	}
	if _, err := x.Claim(ctx, contentseentest.Entry("w/far", 0xffff000000000000, 1), tok); err != nil { // purges the rest
		t.Fatal(err)
	}
	if got, p := checkConsistent(t, x); got != 2 || p != 1 {
		t.Fatalf("after two purges: %d entries, %d pending, want 2 (seq 1, w/far), 1", got, p)
	}
}
