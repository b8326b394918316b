package redisindex

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/internal/redisconn"
	"github.com/simcrawl/simcrawl/internal/redistest"
)

func TestOpenBadName(t *testing.T) {
	rdb := redistest.Client(t, sharedAddr)
	for _, name := range []string{"", "a b", "x{y}", strings.Repeat("n", 65)} {
		if _, err := Open(context.Background(), rdb, Options{Name: name}); err == nil || !strings.Contains(err.Error(), "crawl name") {
			t.Errorf("Open(name %q) = %v, want a crawl name error", name, err)
		}
	}
}

func TestOpenBadOptions(t *testing.T) {
	rdb := redistest.Client(t, sharedAddr)
	for _, so := range []contentseen.SharedOptions{{K: -1}, {K: 99}, {K: 3, Lease: -time.Second}, {K: 3, MaxLag: -2}} {
		if _, err := Open(context.Background(), rdb, Options{Name: newName(), SharedOptions: so}); err == nil {
			t.Errorf("Open(%+v): no error", so)
		}
	}
}

// Open names the address it could not reach.
func TestOpenUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
	t.Cleanup(func() {
		if err := rdb.Close(); err != nil {
			t.Error(err)
		}
	})
	_, err = Open(context.Background(), rdb, Options{Name: "c", SharedOptions: contentseen.SharedOptions{K: 3}})
	if err == nil || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "connect") {
		t.Fatalf("Open on a closed port = %v, want an error naming %s", err, addr)
	}
}

// A worker whose options differ from the crawl's is refused, with every
// difference named; the same options join.
func TestOpenOtherConfig(t *testing.T) {
	rdb := redistest.Client(t, sharedAddr)
	name := newName()
	base := contentseen.SharedOptions{K: 3}
	open(t, rdb, Options{Name: name, SharedOptions: base})
	open(t, rdb, Options{Name: name, SharedOptions: base}) // a second worker
	l10, err := contentseen.LayoutByName(contentseen.Layout10x28)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		so   contentseen.SharedOptions
		want []string
	}{
		{contentseen.SharedOptions{K: 7}, []string{`k "3" (this worker: "7")`}},
		{contentseen.SharedOptions{K: 3, Layout: l10}, []string{`layout "4x16" (this worker: "10x28")`}},
		{contentseen.SharedOptions{K: 3, Lease: time.Minute, MaxLag: 10}, []string{`lease "30s" (this worker: "1m0s")`, `max_lag "4096" (this worker: "10")`}},
	} {
		_, err := Open(context.Background(), rdb, Options{Name: name, SharedOptions: c.so})
		if !errors.Is(err, ErrIncompatible) {
			t.Errorf("Open with %+v = %v, want ErrIncompatible", c.so, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Open with %+v = %q, want it to name %s", c.so, err, w)
			}
		}
	}
	// Another crawl's name on the same server is another index.
	open(t, rdb, Options{Name: newName(), SharedOptions: contentseen.SharedOptions{K: 7}})
}

// A namespace whose meta this package did not write is refused.
func TestOpenMalformedMeta(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Client(t, sharedAddr)
	for _, c := range []struct {
		name  string
		setup func(k keys) error
		want  string
	}{
		{"meta not a hash", func(k keys) error { return rdb.Set(ctx, k.meta, "x", 0).Err() }, "not a hash"},
		{"other format", func(k keys) error { return rdb.HSet(ctx, k.meta, "format", "simcrawl-contentseen/0").Err() }, `format "simcrawl-contentseen/0"`},
		{"fields missing", func(k keys) error { return rdb.HSet(ctx, k.meta, "format", Format).Err() }, `layout ""`},
		{"keys without meta", func(k keys) error { return rdb.Set(ctx, k.seq, "12", 0).Err() }, "without its meta"},
		{"entries without meta", func(k keys) error { return rdb.HSet(ctx, k.entries, "1", "x").Err() }, "without its meta"},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := newName()
			if err := c.setup(newKeys(name, 4)); err != nil {
				t.Fatal(err)
			}
			_, err := Open(ctx, rdb, Options{Name: name, SharedOptions: contentseen.SharedOptions{K: 3}})
			if !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Open = %v, want ErrIncompatible naming %s", err, c.want)
			}
		})
	}
}

// Open loads every script, so that each call is one EVALSHA: one round
// trip.
func TestOpenLoadsScripts(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Client(t, sharedAddr)
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	x := open(t, rdb, Options{Name: newName(), SharedOptions: contentseen.SharedOptions{K: 7}})
	for _, s := range []*redis.Script{metaScript, lookupScript, entriesScript, claimScript, confirmScript, releaseScript, loadScript} {
		ok, err := s.Exists(ctx, rdb).Result()
		if err != nil || len(ok) != 1 || !ok[0] {
			t.Errorf("script %s not in the server's cache after Open: %v %v", s.Hash(), ok, err)
		}
	}
	h := &redisconn.RoundTrips{}
	rdb.AddHook(h)
	e := contentseen.Entry{ID: "w/1", Fingerprint: 0xabc}
	_, tok, err := x.Lookup(ctx, e.Fingerprint, e.Digest)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x.Claim(ctx, e, tok)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Confirm(ctx, c.Seq, e.ID); err != nil {
		t.Fatal(err)
	}
	if n := h.N(); n != 3 {
		t.Errorf("Lookup (nothing near), Claim and Confirm took %d round trips, want 3", n)
	}
	// An exact copy (same digest) is found in one round trip, a near one
	// (fingerprint within K, no digest) in two.
	d := contentseen.Entry{ID: "w/2", Fingerprint: 0xf0f0, Digest: [16]byte{1}}
	_, tok, err = x.Lookup(ctx, d.Fingerprint, d.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if cl, err := x.Claim(ctx, d, tok); err != nil || cl.Seq == 0 {
		t.Fatalf("Claim of w/2 = %+v, %v", cl, err)
	}
	for _, c := range []struct {
		fp   contentseen.Fingerprint
		d    [16]byte
		want int64
	}{
		{^d.Fingerprint, d.Digest, 1},
		{d.Fingerprint ^ 0b1, [16]byte{}, 2},
	} {
		rt0 := h.N()
		es, _, err := x.Lookup(ctx, c.fp, c.d)
		if err != nil || len(es) != 1 || es[0].ID != d.ID {
			t.Fatalf("Lookup(%s, %x) = %v, %v, want w/2", c.fp, c.d, seqs(es), err)
		}
		if n := h.N() - rt0; n != c.want {
			t.Errorf("Lookup(%s, %x) took %d round trips, want %d", c.fp, c.d, n, c.want)
		}
	}
}

// When Redis lost the crawl's keys (its meta hash gone: restarted without
// its append-only file, flushed), every operation fails with ErrLost and
// writes nothing, rather than start an empty index that would let copies
// of stored pages be stored again.
func TestLostKeys(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Client(t, sharedAddr)
	x := open(t, rdb, Options{Name: newName(), SharedOptions: contentseen.SharedOptions{K: 3}})
	e := contentseen.Entry{ID: "w/1", Fingerprint: 0xabc, Digest: [16]byte{1}}
	c, err := x.Claim(ctx, e, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.Del(ctx, x.keys.all...).Err(); err != nil { // as a restart from nothing would
		t.Fatal(err)
	}
	_, _, err = x.Lookup(ctx, e.Fingerprint, e.Digest)
	check := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, ErrLost) || !strings.Contains(err.Error(), x.keys.meta) {
			t.Errorf("%s after the keys were lost = %v, want ErrLost naming %s", op, err, x.keys.meta)
		}
	}
	check("Lookup", err)
	_, err = x.Claim(ctx, e, 0)
	check("Claim", err)
	check("Confirm", x.Confirm(ctx, c.Seq, e.ID))
	check("Release", x.Release(ctx, c.Seq, e.ID))
	check("Load", x.Load(ctx, []contentseen.Entry{e}))
	if n, err := rdb.Exists(ctx, x.keys.all...).Result(); err != nil || n != 0 {
		t.Errorf("%d keys written after the loss (%v), want none", n, err)
	}
}
