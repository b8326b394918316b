package contentseen

import (
	"compress/gzip"
	"context"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// format3Set is the fingerprints of testdata/format3.db.gz, in the order
// they were stored: the first 1,000 by AddBatch, the rest by Seen (ids
// 1..1200). Table 0's prefixes are four, so that its prefix ranges hold
// about 300 entries each and format 3's restart points fall inside them;
// every third fingerprint is planted near an earlier one.
func format3Set() (ids []uint64, fps []Fingerprint) {
	rng := rand.New(rand.NewPCG(17, 3))
	l := DefaultLayout()
	for i := range 1200 {
		fp := l.Unpermute(0, uint64(rng.IntN(4))<<48|rng.Uint64()>>16)
		if i%3 == 2 {
			fp = plant(rng, fps[rng.IntN(len(fps))], rng.IntN(9))
		}
		ids, fps = append(ids, uint64(i+1)), append(fps, fp)
	}
	return ids, fps
}

// TestBoltReadsFormat3 opens testdata/format3.db.gz, an index the
// previous version (storage format 3) wrote from format3Set: it answers
// like the oracle, takes new fingerprints into format 3 blocks (a merge),
// and still says format 3 after reopening.
func TestBoltReadsFormat3(t *testing.T) {
	path := filepath.Join(t.TempDir(), "format3.db")
	gunzipFile(t, "testdata/format3.db.gz", path)
	ids, fps := format3Set()
	o := oracle{}
	for i, fp := range fps {
		if i < 1000 || len(o.linear(fp, DefaultLayout().K())) == 0 { // Seen stores what has no match
			o.add(ids[i], fp)
		}
	}
	rng := rand.New(rand.NewPCG(testSeed(t), 31))
	queries := func() []Fingerprint {
		var qs []Fingerprint
		for range 40 {
			qs = append(qs, plant(rng, fps[rng.IntN(len(fps))], rng.IntN(8)))
		}
		return qs
	}
	x := mustOpenBolt(t, path, BoltOptions{Scheme: "words", NoSync: true})
	if x.format != 3 {
		t.Fatalf("format %d, want 3", x.format)
	}
	checkNear(t, x, x.layout, o, queries())
	ctx := context.Background()
	for i := range 300 {
		id, fp := uint64(10_000+i), plant(rng, fps[rng.IntN(len(fps))], 1+rng.IntN(12))
		if _, _, err := x.Seen(ctx, id, fp); err != nil {
			t.Fatal(err)
		}
		if ms := o.linear(fp, x.layout.K()); len(ms) == 0 {
			o.add(id, fp)
		}
	}
	checkBlocks(t, x, o) // merges the delta into format 3 blocks, and parses them
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	x = mustOpenBolt(t, path, BoltOptions{Scheme: "words", NoSync: true})
	checkNear(t, x, x.layout, o, queries())
	err := x.db.View(func(tx *bolt.Tx) error {
		if f, ok := BoltFormatTx(tx, ""); f != "3" || !ok {
			t.Errorf("BoltFormatTx = %q, %v after writing, want 3, true", f, ok)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestBoltRestartsAtPrefixes stores fingerprints whose table 0 prefix
// ranges hold about 15 entries (the density of a 1M index with 16-bit
// prefixes) or 152 (10M), in formats 3 and 4. Table 0's blocks must have
// their restart points exactly where the format's rule puts them; in
// format 4 no prefix range's first entry may lie minRestartGap entries or
// more after a restart point (what a query decodes before its range).
// Queries must match the oracle.
func TestBoltRestartsAtPrefixes(t *testing.T) {
	seed := testSeed(t)
	for _, c := range []struct {
		name      string
		perPrefix int
	}{{"1M", 15}, {"10M", 152}} {
		for _, format := range []int{3, 4} {
			t.Run(c.name+"/format"+string(rune('0'+format)), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, uint64(c.perPrefix+format)))
				l := DefaultLayout()
				path := filepath.Join(t.TempDir(), "x.db")
				if format == 3 {
					makeFormat3(t, path)
				}
				x := mustOpenBolt(t, path, BoltOptions{Layout: l, NoSync: true})
				o := oracle{}
				var ids []uint64
				var fps []Fingerprint
				base := rng.Uint64N(1<<16 - 200)
				n := max(20*c.perPrefix, 2500) // several blocks
				for i := range n {
					p := (base+rng.Uint64N(uint64(n/c.perPrefix)))<<48 | rng.Uint64()>>16
					fp := l.Unpermute(0, p)
					if i%4 == 3 {
						fp = plant(rng, fps[rng.IntN(len(fps))], rng.IntN(9))
					}
					ids, fps = append(ids, uint64(i+1)), append(fps, fp)
					o.add(uint64(i+1), fp)
				}
				if err := x.AddBatch(context.Background(), ids, fps); err != nil {
					t.Fatal(err)
				}
				checkRestarts(t, x)
				var queries []Fingerprint
				for range 25 {
					queries = append(queries, plant(rng, fps[rng.IntN(len(fps))], rng.IntN(9)))
				}
				checkNear(t, x, l, o, queries)
			})
		}
	}
}

// checkRestarts checks table 0's restart points against x's rule and, in
// format 4, that a prefix range's first entry is fewer than minRestartGap
// entries after one.
func checkRestarts(t *testing.T, x *BoltIndex) {
	t.Helper()
	pre := x.layout.PrefixBits(0)
	err := x.db.View(func(tx *bolt.Tx) error {
		top, err := x.top(tx)
		if err != nil {
			return err
		}
		c := top.Bucket(tablesBucket).Cursor()
		blocks := 0
		for k, v := c.Seek(blockKey(0, 0)); len(k) == 9 && k[0] == 0; k, v = c.Next() {
			b, err := x.parseBlock(0, k, v)
			if err != nil {
				return err
			}
			blocks++
			var got []int
			for rc := b.firstRestart(); rc.j < b.nr; rc = b.after(rc) {
				got = append(got, rc.next)
			}
			es := b.entries(nil)
			if want := restartPoints(es, x.restartRule(0)); !slices.Equal(got, want) {
				t.Fatalf("block %x (format %d): restart points %v, want %v", k[1:], x.format, got, want)
			}
			if x.format < 4 {
				continue
			}
			for j, i := range got {
				flag := binary.BigEndian.Uint16(b.restarts[3*j+1:])&rangeStartFlag != 0
				if begins := es[i-1].p>>(64-pre) != es[i].p>>(64-pre); flag != begins {
					t.Fatalf("block %x: restart point at entry %d flagged %v, begins a prefix range: %v", k[1:], i, flag, begins)
				}
			}
			last := 0
			for i := 1; i < len(es); i++ {
				if slices.Contains(got, i) {
					last = i
					continue
				}
				if es[i-1].p>>(64-pre) == es[i].p>>(64-pre) {
					continue // not a range's first entry
				}
				if i-last >= minRestartGap {
					t.Fatalf("block %x: range at entry %d begins %d entries after the last restart point", k[1:], i, i-last)
				}
			}
		}
		if blocks < 2 {
			t.Fatalf("%d blocks of table 0, want several", blocks)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// makeFormat3 creates an empty index at path in storage format 3, as the
// previous version did: its blocks are written with format 3's restart
// points.
func makeFormat3(t *testing.T, path string) {
	t.Helper()
	x := mustOpenBolt(t, path, BoltOptions{NoSync: true})
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("contentseen")).Bucket(metaBucket).Put(formatKey, []byte("3"))
	})
	if cerr := db.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
}

func gunzipFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
