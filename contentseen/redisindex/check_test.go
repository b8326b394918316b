package redisindex

import (
	"context"
	"encoding/binary"
	"strconv"
	"strings"
	"testing"
)

// checkConsistent reads the whole index of x and fails t unless its keys
// agree with one another: every entry is in its bucket of every table and
// under its digest exactly once, every bucket and digest record names a
// live entry with that fingerprint and digest, every pending seq is an
// entry, and no entry is above the seq counter. It returns the number of
// entries and of pending ones.
func checkConsistent(t testing.TB, x *Index) (entries, pending int) {
	t.Helper()
	ctx := context.Background()
	es, err := x.rdb.HGetAll(ctx, x.keys.entries).Result()
	if err != nil {
		t.Fatal(err)
	}
	cur, err := x.rdb.Get(ctx, x.keys.seq).Uint64()
	if err != nil && len(es) > 0 {
		t.Fatal(err)
	}
	type rec struct {
		fp     uint64
		digest string
	}
	bySeq := map[uint64]rec{}
	want := map[string]int{} // "t<table>/<bucket>/<record>" and "d/<digest>/<seq>" -> count expected
	for s, r := range es {
		seq, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("entry field %q: %v", s, err)
		}
		if seq > cur {
			t.Errorf("entry %d above the seq counter %d", seq, cur)
		}
		e, err := decodeEntry(r)
		if err != nil {
			t.Fatalf("entry %d: %v", seq, err)
		}
		bySeq[seq] = rec{uint64(e.Fingerprint), string(e.Digest[:])}
		var b [16]byte
		binary.BigEndian.PutUint64(b[:8], uint64(e.Fingerprint))
		binary.BigEndian.PutUint64(b[8:], seq)
		l := x.opts.Layout
		for tb := range l.Tables() {
			want["t"+strconv.Itoa(tb)+"/"+bucket(l.Permute(tb, e.Fingerprint), l.PrefixBits(tb), x.width)+"/"+string(b[:])]++
		}
		if e.Digest != ([16]byte{}) {
			want["d/"+string(e.Digest[:])+"/"+string(b[8:])]++
		}
	}
	got := map[string]int{}
	for tb, key := range x.keys.tables {
		bs, err := x.rdb.HGetAll(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		for name, v := range bs {
			if v == "" || len(v)%16 != 0 {
				t.Errorf("table %d bucket %x: %d bytes", tb, name, len(v))
			}
			for i := 0; i+16 <= len(v); i += 16 {
				got["t"+strconv.Itoa(tb)+"/"+name+"/"+v[i:i+16]]++
			}
		}
	}
	ds, err := x.rdb.HGetAll(ctx, x.keys.digests).Result()
	if err != nil {
		t.Fatal(err)
	}
	for d, v := range ds {
		if v == "" || len(v)%8 != 0 {
			t.Errorf("digest %x: %d bytes", d, len(v))
		}
		for i := 0; i+8 <= len(v); i += 8 {
			got["d/"+d+"/"+v[i:i+8]]++
		}
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: %d records, want %d", describe(k), got[k], n)
		}
	}
	for k, n := range got {
		if want[k] == 0 {
			t.Errorf("%s: %d records of no entry", describe(k), n)
		}
	}
	ps, err := x.rdb.ZRange(ctx, x.keys.pending, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ps {
		if _, ok := es[s]; !ok {
			t.Errorf("pending seq %s is no entry", s)
		}
	}
	return len(es), len(ps)
}

func describe(k string) string {
	parts := strings.SplitN(k, "/", 3)
	if len(parts) != 3 {
		return k
	}
	return parts[0] + " " + strconv.Quote(parts[1]) + " record " + strconv.Quote(parts[2])
}
