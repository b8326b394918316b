package redisindex

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/contentseen/contentseentest"
	"github.com/simcrawl/simcrawl/internal/redistest"
)

// Load inserts committed entries as Claim and Confirm would: the keys are
// consistent (several entries in one bucket or with one digest within a
// batch, and batches appending to buckets of earlier ones), and Lookup
// answers as SharedMem given the same entries.
func TestLoad(t *testing.T) {
	ctx := context.Background()
	so := contentseen.SharedOptions{K: 3}
	x := open(t, redistest.Client(t, sharedAddr), Options{Name: newName(), SharedOptions: so})
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

// Load and BulkLoad write the very keys that Claim and Confirm write,
// entry by entry, for the same entries in the same order: byte for byte,
// every table bucket, digest list, record and the seq counter.
func TestLoadSameKeysAsClaimConfirm(t *testing.T) {
	ctx := context.Background()
	so := contentseen.SharedOptions{K: 3}
	rdb := redistest.Client(t, sharedAddr)
	loaded := open(t, rdb, Options{Name: newName(), SharedOptions: so})
	bulk := open(t, rdb, Options{Name: newName(), SharedOptions: so})
	claimed := open(t, rdb, Options{Name: newName(), SharedOptions: so})
	r := rand.New(rand.NewPCG(7, 8))
	var es []contentseen.Entry
	for i := range bulkFields + 90 { // several scripts of each loader, the last short
		fp := contentseen.Fingerprint(r.Uint64())
		if i > 0 && i%4 == 0 {
			fp = flip(r, es[r.IntN(len(es))].Fingerprint, r.IntN(4)) // a near copy: shares buckets, conflicts
		}
		e := contentseentest.Entry(fmt.Sprint("w/", i), fp, r.Uint64())
		switch {
		case i%9 == 0:
			e.Digest = [16]byte{}
		case i%5 == 0 && i > 0:
			e.Digest = es[r.IntN(len(es))].Digest
		}
		es = append(es, e)
	}
	if err := loaded.Load(ctx, es); err != nil {
		t.Fatal(err)
	}
	// Two calls: the second appends to buckets and digests of the first;
	// the first is more than one script per key.
	if err := bulk.BulkLoad(ctx, es[:bulkFields+10]); err != nil {
		t.Fatal(err)
	}
	if err := bulk.BulkLoad(ctx, es[bulkFields+10:]); err != nil {
		t.Fatal(err)
	}
	conflicts := 0
	for _, e := range es {
		c, err := claimed.Claim(ctx, e, 0) // token 0: checked against every earlier claim

		if err != nil {
			t.Fatal(err)
		}
		if c.Seq == 0 { // a copy of an earlier entry: Load inserts it anyway
			conflicts++
			if c, err = claimed.Claim(ctx, e, c.Token); err != nil || c.Seq == 0 {
				t.Fatalf("claim after the conflict: %+v, %v", c, err)
			}
		}
		if err := claimed.Confirm(ctx, c.Seq, e.ID); err != nil {
			t.Fatal(err)
		}
	}
	if conflicts == 0 {
		t.Fatal("no entry conflicted: the set does not test shared buckets")
	}
	want := dumpIndex(t, claimed)
	for how, x := range map[string]*Index{"Load": loaded, "BulkLoad": bulk} {
		got := dumpIndex(t, x)
		if len(want) != len(got) {
			t.Fatalf("%s wrote %d keys, Claim and Confirm %d", how, len(got), len(want))
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("key %s after %s:\n%.300q\nafter Claim and Confirm:\n%.300q", k, how, got[k], v)
			}
		}
	}
}

// dumpIndex returns every key of x's index but the meta hash, by its name
// without the crawl's prefix, as canonical text.
func dumpIndex(t *testing.T, x *Index) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	for _, key := range x.keys.all[1:] {
		typ, err := x.rdb.Type(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		var v string
		switch typ {
		case "none":
			continue
		case "string":
			v, err = x.rdb.Get(ctx, key).Result()
		case "hash":
			var m map[string]string
			m, err = x.rdb.HGetAll(ctx, key).Result()
			fs := slices.Sorted(maps.Keys(m))
			for _, f := range fs {
				v += fmt.Sprintf("%q=%q\n", f, m[f])
			}
		case "zset":
			var zs []redis.Z
			zs, err = x.rdb.ZRangeWithScores(ctx, key, 0, -1).Result()
			v = fmt.Sprint(zs)
		default:
			t.Fatalf("%s: unexpected type %s", key, typ)
		}
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimPrefix(key, x.keys.prefix)] = v
	}
	return out
}
