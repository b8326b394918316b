package contentseen

import (
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestBitsRoundTrip writes random values of random widths (0 to 64 bits)
// and reads them back.
func TestBitsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 21))
	for round := range 200 {
		n := rng.IntN(300)
		widths := make([]uint, n)
		vals := make([]uint64, n)
		var w bitWriter
		for i := range n {
			widths[i] = uint(rng.IntN(65))
			vals[i] = rng.Uint64()
			if widths[i] < 64 {
				vals[i] &= 1<<widths[i] - 1
			}
			w.write(vals[i], widths[i])
		}
		r := bitReader{b: w.flush()}
		for i := range n {
			if got := r.read(widths[i]); got != vals[i] {
				t.Fatalf("round %d value %d: read %x (%d bits), wrote %x", round, i, got, widths[i], vals[i])
			}
		}
	}
}

// TestBuildCode checks built codes on flat, skewed, geometric and empty
// histograms: lengths within 1..maxCodeLen, Kraft's inequality, every
// symbol decoded back from its code followed by any bits, and a skewed
// histogram coded in fewer bits than the flat code.
func TestBuildCode(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 22))
	var hists [][hSymbols]uint64
	hists = append(hists, [hSymbols]uint64{})
	var flat, geo, one [hSymbols]uint64
	for h := range hSymbols {
		flat[h] = 1000
		geo[h] = 1 << max(0, 40-abs(h-96)) // very skewed: forces the length limit
	}
	one[20] = 1 << 40
	hists = append(hists, flat, geo, one)
	for range 20 {
		var r [hSymbols]uint64
		for h := range hSymbols {
			r[h] = rng.Uint64N(1 << rng.IntN(30))
		}
		hists = append(hists, r)
	}
	for i, hist := range hists {
		c := buildCode(&hist)
		kraft := 0
		for h, l := range c.lens {
			if l < 1 || l > maxCodeLen {
				t.Fatalf("hist %d: length %d for h %d", i, l, h)
			}
			kraft += 1 << (maxCodeLen - l)
			for range 4 {
				window := uint64(c.code[h])<<(maxCodeLen-l) | rng.Uint64N(1<<(maxCodeLen-l))
				if e := c.dec[window]; int(e&0xff) != h || uint8(e>>8) != l || uint(e>>16)&0xff != symbols[h].rest {
					t.Fatalf("hist %d: window %b decodes to symbol %d len %d rest %d, want %d, %d, %d", i, window, e&0xff, uint8(e>>8), e>>16, h, l, symbols[h].rest)
				}
			}
		}
		if kraft > 1<<maxCodeLen {
			t.Fatalf("hist %d: Kraft sum %d > %d", i, kraft, 1<<maxCodeLen)
		}
	}
	if c := buildCode(&geo); c.bitsFor(&geo) >= flatCode().bitsFor(&geo) {
		t.Errorf("skewed histogram: built code %v bits, flat %v", c.bitsFor(&geo), flatCode().bitsFor(&geo))
	}
}

func abs(v int) int { return max(v, -v) }

// TestBlockCodec encodes sorted runs (even, clustered, adjacent values,
// both ends of the key space) with flat and built codes, in formats 3 and
// 4, and decodes them.
func TestBlockCodec(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 23))
	x := &BoltIndex{layout: DefaultLayout()}
	x.codes.init(1)
	for round := range 300 {
		n := 1 + rng.IntN(200)
		base := rng.Uint64()
		ps := make([]uint64, 0, n)
		for len(ps) < n {
			switch round % 4 {
			case 0:
				ps = append(ps, rng.Uint64())
			case 1:
				ps = append(ps, base+rng.Uint64N(1000))
			case 2:
				ps = append(ps, base+uint64(len(ps))) // h = 63 and carries
			default:
				ps = append(ps, []uint64{0, 1, ^uint64(0), 1 << 63, rng.Uint64()}[rng.IntN(5)])
			}
		}
		slices.Sort(ps)
		ps = slices.Compact(ps)
		es := make([]entry, len(ps))
		var hist [hSymbols]uint64
		for i, p := range ps {
			es[i] = entry{p: p, id: rng.Uint64N(1 << rng.IntN(64))}
			if i > 0 {
				sym, _ := symbolOf(uint(leadingZeros(ps[i-1]^p)), p)
				hist[sym]++
			}
		}
		ver, c := uint8(0), flatCode()
		if round%2 == 1 {
			c = buildCode(&hist)
			ver = uint8(1 + round%200)
			x.codes.register(0, int(ver), c)
		}
		x.format = 3 + round/2%2 // both restart rules, with flat and built codes
		v := encodeBlock(es, ver, c, true, x.restartRule(0))
		k := blockKey(0, es[0].p)
		b, err := x.parseBlock(0, k, v)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if got := b.entries(nil); !slices.Equal(got, es) {
			t.Fatalf("round %d: decoded %x, want %x", round, got, es)
		}
		if _, err := x.parseBlock(0, k, v[:len(v)-1]); err == nil {
			t.Fatalf("round %d: a block cut short parsed", round)
		}
	}
}

// TestBoltMergeInterrupted merges part of the delta into table 0's blocks,
// then closes the index as a crash would leave it (delta not trimmed):
// after reopening, answers match the oracle, a checkpoint completes the
// merge, and the blocks hold each fingerprint once.
func TestBoltMergeInterrupted(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 24))
	l := DefaultLayout()
	path := filepath.Join(t.TempDir(), "x.db")
	x := openBoltBlocks(t, path, l, 5)
	x.minDelta = 1 << 30 // no background merge
	o := oracle{}
	var queries []Fingerprint
	for id := range uint64(120) {
		fp := Fingerprint(rng.Uint64())
		if id%4 == 3 {
			fp = plant(rng, queries[rng.IntN(len(queries))], rng.IntN(5))
		}
		queries = append(queries, fp, plant(rng, fp, rng.IntN(4)))
		if ms := o.linear(fp, l.K()); len(ms) == 0 {
			seen(t, x, id, fp, false, Match{})
			o.add(id, fp)
		}
	}
	// Half of table 0's merge, as a crash in step 2 would leave it.
	es := frozenEntries(nil, x.delta.active, 0)
	err := x.db.Update(func(tx *bolt.Tx) error {
		top, err := x.top(tx)
		if err != nil {
			return err
		}
		var hist [hSymbols]uint64
		_, err = x.mergeTable(top.Bucket(tablesBucket), 0, es[:len(es)/2], 0, &hist, nil, nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	x = openBoltBlocks(t, path, l, 5)
	x.minDelta = 1 << 30
	checkNear(t, x, l, o, queries)
	checkBlocks(t, x, o) // Checkpoint, then every fingerprint once
	checkNear(t, x, l, o, queries)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestBoltSeenTxRollback records fingerprints in a transaction that rolls
// back: neither that transaction's writer successors nor readers see them,
// and recording them again succeeds.
func TestBoltSeenTxRollback(t *testing.T) {
	ctx := context.Background()
	x := mustOpenBolt(t, filepath.Join(t.TempDir(), "x.db"), BoltOptions{NoSync: true})
	defer x.Close()
	fps := []Fingerprint{0x1111_2222_3333_4444, 0x5555_6666_7777_8888}
	errRollback := errors.New("roll back")
	err := x.db.Update(func(tx *bolt.Tx) error {
		for i, fp := range fps {
			if _, found, err := x.SeenTx(tx, uint64(i+1), fp); err != nil || found {
				t.Fatalf("SeenTx = %v, %v", found, err)
			}
		}
		// Seen in the same transaction.
		if _, found, err := x.SeenTx(tx, 9, fps[0]^1); err != nil || !found {
			t.Fatalf("SeenTx of a near-duplicate in the same transaction = %v, %v", found, err)
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatal(err)
	}
	if ms, err := x.Near(ctx, fps[0], 3); err != nil || len(ms) != 0 {
		t.Fatalf("Near after rollback = %v, %v", ms, err)
	}
	seen(t, x, 3, fps[1]^2, false, Match{})
	seen(t, x, 4, fps[1], true, Match{ID: 3, Fingerprint: fps[1] ^ 2, Distance: 1})
	if n := x.Len(); n != 1 {
		t.Fatalf("Len = %d, want 1", n)
	}
}

func leadingZeros(v uint64) int {
	n := 0
	for i := 63; i >= 0 && v>>uint(i)&1 == 0; i-- {
		n++
	}
	return n
}

// TestBoltSeenDuringMerges runs Seen from 8 goroutines over clusters of
// near-duplicates while the background merger moves the delta into small
// blocks again and again, then checks the index's invariant: no two
// admitted fingerprints are within K, every rejected one has an admitted
// one within K, and Near agrees with the oracle after a checkpoint and a
// reopen. 640 fingerprints (400-450 admitted) into blocks of about 3
// entries: 20-45 merges, the later ones in several steps of
// mergeStepBlocks (as 1,200 into blocks of 6, for half the CPU).
func TestBoltSeenDuringMerges(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 26))
	ctx := context.Background()
	l := DefaultLayout()
	path := filepath.Join(t.TempDir(), "x.db")
	x := openBoltBlocks(t, path, l, 3)
	var bases []Fingerprint
	for range 40 {
		bases = append(bases, Fingerprint(rng.Uint64()))
	}
	const workers, per = 8, 80
	fps := make([][]Fingerprint, workers)
	for w := range fps {
		for range per {
			fps[w] = append(fps[w], plant(rng, bases[rng.IntN(len(bases))], rng.IntN(8)))
		}
	}
	admitted := make([][]Fingerprint, workers)
	rejected := make([][]Fingerprint, workers)
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			for i, fp := range fps[w] {
				_, found, err := x.Seen(ctx, uint64(w*per+i+1), fp)
				if err != nil {
					errs <- err
					return
				}
				if found {
					rejected[w] = append(rejected[w], fp)
				} else {
					admitted[w] = append(admitted[w], fp)
				}
			}
			errs <- nil
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if x.merges.Load() < 5 {
		t.Errorf("%d merges ran during the test, want several", x.merges.Load())
	}
	var all []Fingerprint
	for _, a := range admitted {
		all = append(all, a...)
	}
	for i, a := range all {
		for _, b := range all[i+1:] {
			if d := Distance(a, b); d <= l.K() {
				t.Fatalf("admitted %v and %v, %d bits apart", a, b, d)
			}
		}
	}
	for _, r := range rejected {
		for _, fp := range r {
			if !slices.ContainsFunc(all, func(a Fingerprint) bool { return Distance(a, fp) <= l.K() }) {
				t.Fatalf("rejected %v, nothing admitted within %d", fp, l.K())
			}
		}
	}
	if x.Len() != len(all) {
		t.Fatalf("Len = %d, admitted %d", x.Len(), len(all))
	}
	o := oracle{}
	err := x.db.View(func(tx *bolt.Tx) error {
		top, err := x.top(tx)
		if err != nil {
			return err
		}
		return top.Bucket(fpsBucket).ForEach(func(k, v []byte) error {
			o.add(binary.BigEndian.Uint64(k), Fingerprint(binary.BigEndian.Uint64(v)))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	queries := append(append([]Fingerprint(nil), bases...), all...)
	checkNear(t, x, l, o, queries)
	checkBlocks(t, x, o)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	x = openBoltBlocks(t, path, l, 3)
	defer x.Close()
	checkNear(t, x, l, o, queries)
}

// TestBoltCodeVersions grows an index by merges big enough to measure h
// and build new code versions, reopens it, and checks that every block
// decodes with its recorded version and that answers match the oracle.
func TestBoltCodeVersions(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 27))
	ctx := context.Background()
	l := DefaultLayout()
	path := filepath.Join(t.TempDir(), "x.db")
	x := mustOpenBolt(t, path, BoltOptions{NoSync: true})
	x.blockLimit = 200 // about 30 entries a block: many blocks per merge
	x.minDelta = 1 << 30
	o := oracle{}
	var queries []Fingerprint
	for round := range 4 {
		err := x.db.Update(func(tx *bolt.Tx) error {
			for i := range 3000 {
				id := uint64(round*3000 + i + 1)
				fp := Fingerprint(rng.Uint64())
				if err := x.AddTx(tx, id, fp); err != nil {
					return err
				}
				o.add(id, fp)
				if i%100 == 0 {
					queries = append(queries, fp, plant(rng, fp, 2))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Checkpoint(ctx); err != nil {
			t.Fatal(err)
		}
	}
	versions := 0
	err := x.db.View(func(tx *bolt.Tx) error {
		top, err := x.top(tx)
		if err != nil {
			return err
		}
		versions = top.Bucket(codesBucket).Stats().KeyN
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if versions == 0 {
		t.Fatal("no code version was built from the merges' measured h")
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	x = mustOpenBolt(t, path, BoltOptions{NoSync: true})
	x.blockLimit = 200
	defer x.Close()
	checkNear(t, x, l, o, queries)
	checkBlocks(t, x, o)
}
