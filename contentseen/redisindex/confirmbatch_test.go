package redisindex

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/contentseen/contentseentest"
	"github.com/simcrawl/simcrawl/internal/redisconn"
	"github.com/simcrawl/simcrawl/internal/redistest"
)

// ConfirmBatch confirms claims in one round trip with Confirm's answer for
// each: pending ones are committed, a committed one is a no-op, a released
// one and one with another ID are lost; and after the server dropped its
// scripts it still answers each.
func TestConfirmBatch(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Client(t, sharedAddr)
	x := open(t, rdb, Options{Name: newName(), SharedOptions: contentseen.SharedOptions{K: 3}})
	var claims []contentseen.ClaimRef
	for i := range 5 {
		e := contentseentest.Entry(fmt.Sprint("w/", i), contentseen.Fingerprint(0xff)<<(12*i), uint64(i))
		_, tok, err := x.Lookup(ctx, e.Fingerprint, e.Digest)
		if err != nil {
			t.Fatal(err)
		}
		c, err := x.Claim(ctx, e, tok)
		if err != nil || c.Seq == 0 {
			t.Fatalf("Claim %s = %+v, %v", e.ID, c, err)
		}
		claims = append(claims, contentseen.ClaimRef{Seq: c.Seq, ID: e.ID})
	}
	if err := x.Confirm(ctx, claims[1].Seq, claims[1].ID); err != nil {
		t.Fatal(err)
	}
	if err := x.Release(ctx, claims[2].Seq, claims[2].ID); err != nil {
		t.Fatal(err)
	}
	claims[3].ID = "w/other"
	want := []error{nil, nil, contentseen.ErrLeaseLost, contentseen.ErrLeaseLost, nil}

	h := &redisconn.RoundTrips{}
	rdb.AddHook(h)
	errs := x.ConfirmBatch(ctx, claims)
	if n := h.N(); n != 1 {
		t.Errorf("ConfirmBatch of %d claims took %d round trips, want 1", len(claims), n)
	}
	check := func(errs []error) {
		t.Helper()
		if len(errs) != len(claims) {
			t.Fatalf("ConfirmBatch returned %d errors for %d claims", len(errs), len(claims))
		}
		for i, err := range errs {
			if want[i] == nil && err != nil || want[i] != nil && !errors.Is(err, want[i]) {
				t.Errorf("ConfirmBatch: claim %d (%s): %v, want %v", claims[i].Seq, claims[i].ID, err, want[i])
			}
		}
	}
	check(errs)
	for _, i := range []int{0, 4} {
		es, _, err := x.Lookup(ctx, contentseen.Fingerprint(0xff)<<(12*i), [16]byte{})
		if err != nil || len(es) != 1 || es[0].Pending {
			t.Errorf("after ConfirmBatch, Lookup of %s = %+v, %v, want it committed", claims[i].ID, es, err)
		}
	}
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	check(x.ConfirmBatch(ctx, claims))
}
