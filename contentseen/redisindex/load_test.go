package redisindex

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/contentseen/contentseentest"
)

// Load inserts committed entries as Claim and Confirm would: the keys are
// consistent (several entries in one bucket or with one digest within a
// batch, and batches appending to buckets of earlier ones), and Lookup
// answers as SharedMem given the same entries.
func TestLoad(t *testing.T) {
	ctx := context.Background()
	so := contentseen.SharedOptions{K: 3}
	x := open(t, client(t, sharedAddr), Options{Name: newName(), SharedOptions: so})
	mem, err := contentseen.NewSharedMem(so)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	r := rand.New(rand.NewPCG(5, 6))
	var es []contentseen.Entry
	n := 3*loadBatch*loadPerPipe + 17 // several pipelines, the last one short
	for i := range n {
		fp := contentseen.Fingerprint(r.Uint64())
		if i > 0 && i%3 == 0 {
			fp = flip(r, es[r.IntN(len(es))].Fingerprint, r.IntN(5)) // shares buckets with another
		}
		e := contentseentest.Entry(fmt.Sprint("w/", i), fp, r.Uint64())
		if i%7 == 0 && i > 0 {
			e.Digest = es[r.IntN(len(es))].Digest
		}
		if i%11 == 0 {
			e.Digest = [16]byte{}
		}
		es = append(es, e)
	}
	if err := x.Load(ctx, es[:n/2]); err != nil {
		t.Fatal(err)
	}
	if err := x.Load(ctx, es[n/2:]); err != nil {
		t.Fatal(err)
	}
	var tok contentseen.Token
	for _, e := range es {
		c, err := mem.Claim(ctx, e, tok)
		if err != nil {
			t.Fatal(err)
		}
		if c.Seq == 0 { // a conflict: insert it anyway, as Load does
			if c, err = mem.Claim(ctx, e, c.Token); err != nil || c.Seq == 0 {
				t.Fatalf("oracle claim: %+v, %v", c, err)
			}
		}
		if err := mem.Confirm(ctx, c.Seq, e.ID); err != nil {
			t.Fatal(err)
		}
		tok = c.Token
	}
	if got, pend := checkConsistent(t, x); got != n || pend != 0 {
		t.Fatalf("%d entries, %d pending after Load, want %d, 0", got, pend, n)
	}
	for q := range 400 {
		e := es[r.IntN(len(es))]
		fp, d := flip(r, e.Fingerprint, r.IntN(5)), [16]byte{}
		if q%2 == 0 {
			d = e.Digest
		}
		gm, tm, err := mem.Lookup(ctx, fp, d)
		if err != nil {
			t.Fatal(err)
		}
		gr, tr, err := x.Lookup(ctx, fp, d)
		if err != nil {
			t.Fatal(err)
		}
		if tm != tr || !sameEntries(gm, gr) {
			t.Fatalf("Lookup(%s) after Load = %v token %d, oracle %v token %d", fp, seqs(gr), tr, seqs(gm), tm)
		}
	}
}
