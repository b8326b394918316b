package contentseen

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// openBoltBlocks opens an index whose blocks hold about perBlock entries
// (at most 10 bytes each), and whose delta is merged into the blocks in
// the background whenever it holds perBlock entries, so that a few dozen
// fingerprints make many blocks and many merges.
func openBoltBlocks(t testing.TB, path string, l Layout, perBlock int) *BoltIndex {
	t.Helper()
	return openBoltBlocksWith(t, path, perBlock, BoltOptions{Layout: l, NoSync: true})
}

// openBoltBlocksWith is openBoltBlocks with other options (o.Layout set).
func openBoltBlocksWith(t testing.TB, path string, perBlock int, o BoltOptions) *BoltIndex {
	t.Helper()
	x := mustOpenBolt(t, path, o)
	x.blockLimit = blockHeader + 1 + perBlock*10
	x.minDelta = perBlock
	return x
}

// checkBlocks checks the invariants of every table's blocks: keys are the
// blocks' first entries, entries are sorted across blocks, no block is
// empty or larger than the limit, and every
// table holds Len entries, each the permutation of a stored fingerprint.
// It merges the delta first (Checkpoint) and checks that it is empty. It
// returns the number of blocks per table.
func checkBlocks(t testing.TB, x *BoltIndex, o oracle) []int {
	t.Helper()
	if err := x.Checkpoint(context.Background()); err != nil {
		t.Fatal(err)
	}
	blocks := make([]int, x.layout.Tables())
	err := x.db.View(func(tx *bolt.Tx) error {
		top, err := x.top(tx)
		if err != nil {
			return err
		}
		n := x.LenTx(tx)
		if d := top.Bucket(deltaBucket).Stats().KeyN; d != 0 {
			t.Fatalf("%d delta entries after Checkpoint", d)
		}
		c := top.Bucket(tablesBucket).Cursor()
		for tab := range x.layout.Tables() {
			entries := 0
			var prev uint64
			k, v := c.Seek(blockKey(tab, 0))
			for ; len(k) == 9 && int(k[0]) == tab; k, v = c.Next() {
				lb := binary.BigEndian.Uint64(k[1:])
				b, err := x.parseBlock(tab, k, v)
				if err != nil {
					t.Fatalf("table %d block %x: %v", tab, lb, err)
				}
				if b.n == 0 || len(v) > x.blockLimit && b.n > 1 {
					t.Fatalf("table %d block %x: %d entries in %d bytes (limit %d)", tab, lb, b.n, len(v), x.blockLimit)
				}
				es := b.entries(nil)
				if es[0].p != lb {
					t.Fatalf("table %d block %x starts with %x", tab, lb, es[0].p)
				}
				for _, e := range es {
					p := e.p
					if entries > 0 && p <= prev {
						t.Fatalf("table %d block %x: entry %x after %x", tab, lb, p, prev)
					}
					id, ok := o[x.layout.Unpermute(tab, p)]
					if !ok || tab == 0 && id != e.id {
						t.Fatalf("table %d: entry %x id %d not stored (oracle id %d, %v)", tab, p, e.id, id, ok)
					}
					prev = p
					entries++
				}
				blocks[tab]++
			}
			if entries != n || n != len(o) {
				t.Fatalf("table %d: %d entries, Len %d, oracle %d", tab, entries, n, len(o))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return blocks
}

// checkNear compares Near with the linear oracle for every query and k.
func checkNear(t testing.TB, x Index, l Layout, o oracle, queries []Fingerprint) {
	t.Helper()
	for _, q := range queries {
		for k := 0; k <= testMaxK(l); k++ {
			got, err := x.Near(context.Background(), q, k)
			if err != nil {
				t.Fatal(err)
			}
			if want := o.linear(q, k); !equalMatches(got, want) {
				t.Fatalf("Near(%v, %d) = %v, want %v", q, k, got, want)
			}
		}
	}
}

// TestBoltBlockSplits inserts one by one into blocks of 3 entries, so that
// nearly every insert splits a block, and checks the blocks and answers.
func TestBoltBlockSplits(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 11))
	l := DefaultLayout()
	x := openBoltBlocks(t, filepath.Join(t.TempDir(), "x.db"), l, 3)
	o := oracle{}
	var queries []Fingerprint
	for i := range 300 {
		fp := Fingerprint(rng.Uint64())
		if i%3 == 0 && len(queries) > 0 {
			fp = plant(rng, queries[rng.IntN(len(queries))], 4)
		}
		queries = append(queries, plant(rng, fp, rng.IntN(5)))
		add(t, x, uint64(i%250), fp) // ids < 256: one-byte ids
		o.add(uint64(i%250), fp)
	}
	blocks := checkBlocks(t, x, o)
	for tab, n := range blocks {
		if n < len(o)/6 {
			t.Errorf("table %d: %d blocks for %d entries of about 3", tab, n, len(o))
		}
	}
	checkNear(t, x, l, o, queries)
}

// TestBoltBlockEqualPrefixes stores many fingerprints that share every
// table's prefix (they differ in the low bits of each 16-bit block), so a
// query's prefix range spans many blocks of every table.
func TestBoltBlockEqualPrefixes(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 12))
	l := DefaultLayout()
	x := openBoltBlocks(t, filepath.Join(t.TempDir(), "x.db"), l, 4)
	const base = Fingerprint(0x1234_5678_9abc_def0)
	o := oracle{}
	var ids []uint64
	var fps []Fingerprint
	for id := range uint64(200) {
		// Flip up to 2 bits in the low byte of two blocks: same leading
		// block for the tables led by the other two.
		fp := base ^ Fingerprint(rng.Uint64()&0x0003_0000_0003_0003)
		fp ^= Fingerprint(uint64(1) << (16 * rng.Uint64N(4)) << rng.Uint64N(8))
		if _, dup := o[fp]; dup {
			continue
		}
		o.add(id, fp)
		ids, fps = append(ids, id), append(fps, fp)
	}
	half := len(fps) / 2
	for i := range half {
		add(t, x, ids[i], fps[i])
	}
	if err := x.AddBatch(context.Background(), ids[half:], fps[half:]); err != nil {
		t.Fatal(err)
	}
	blocks := checkBlocks(t, x, o)
	if blocks[0] < 8 {
		t.Errorf("table 0: %d blocks for %d entries of about 4", blocks[0], len(o))
	}
	queries := []Fingerprint{base, base ^ 0xff, base ^ 0xf000_0000_0000_000f, ^base}
	for range 30 {
		queries = append(queries, plant(rng, fps[rng.IntN(len(fps))], rng.IntN(5)))
	}
	checkNear(t, x, l, o, queries)
}

// TestBoltBlockBoundaryAtPrefix builds table 0 so that a block starts
// exactly where a query's prefix range starts (its lower bound is the
// prefix followed by zeros) and the block before ends with the last key of
// the previous prefix, then queries both prefixes and the ends of the key
// space.
func TestBoltBlockBoundaryAtPrefix(t *testing.T) {
	l := DefaultLayout()
	x := openBoltBlocks(t, filepath.Join(t.TempDir(), "x.db"), l, 4)
	const prefix = uint64(0xabcd) << 48
	const below = prefix - 1<<48 // the previous 16-bit prefix
	// Permuted for table 0, in order: 4 per block.
	ps := []uint64{
		below | 0x10, below | 0x0000_0100_0000, below | 0x0100_0000_0000, below | 0xffff_ffff_ffff,
		prefix, prefix | 0x3, prefix | 0x1_0000_0000, prefix | 0xf000_0000_0000,
		prefix | 0xffff_ffff_fffe, prefix | 0xffff_ffff_ffff, 0xffff_ffff_ffff_ffff,
	}
	o := oracle{}
	var ids []uint64
	var fps []Fingerprint
	for i, p := range ps {
		fp := l.Unpermute(0, p)
		o.add(uint64(i+1), fp)
		ids, fps = append(ids, uint64(i+1)), append(fps, fp)
	}
	// Blocks of 4, 4 and 3 entries: the limit is the largest of the three.
	_, code := x.codes.latest(0)
	x.blockLimit = 0
	for i := 0; i < len(ps); i += 4 {
		var es []entry
		for j := i; j < min(i+4, len(ps)); j++ {
			es = append(es, entry{ps[j], uint64(j + 1)})
		}
		x.blockLimit = max(x.blockLimit, len(encodeBlock(es, 0, code, true, x.restartRule(0))))
	}
	if err := x.AddBatch(context.Background(), ids, fps); err != nil {
		t.Fatal(err)
	}
	checkBlocks(t, x, o)
	err := x.db.View(func(tx *bolt.Tx) error {
		top, err := x.top(tx)
		if err != nil {
			return err
		}
		if top.Bucket(tablesBucket).Get(blockKey(0, prefix)) == nil {
			t.Fatalf("table 0 has no block starting at %x: the test's premise is broken", prefix)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var queries []Fingerprint
	for _, p := range []uint64{prefix, prefix | 0x7, below | 0xffff_ffff_fff0, below, 0, 0xffff_ffff_ffff_fff0, prefix | 0xffff_ffff_ffff} {
		queries = append(queries, l.Unpermute(0, p))
	}
	for _, fp := range fps {
		queries = append(queries, fp, fp^1, fp^0b1011)
	}
	checkNear(t, x, l, o, queries)
	// One more insert right at the boundary, below it and above the end.
	for i, p := range []uint64{prefix | 0x1, below | 0xffff_ffff_fffe, 0} {
		fp := l.Unpermute(0, p)
		id := uint64(100 + i)
		o.add(id, fp)
		add(t, x, id, fp)
		queries = append(queries, fp^0b110)
	}
	checkBlocks(t, x, o)
	checkNear(t, x, l, o, queries)
}

// TestBoltBlocksMatchOracle is a random property test: for every layout,
// rounds of Seen, Add and AddBatch into small blocks (splits all the
// time), with the index closed and reopened between rounds, against the
// linear oracle and the block invariants. Rounds 0 and 2 and the last
// reopen hold the tables in memory (BoltOptions.MemoryLimit), so that the
// mirror is built at open, rebuilt by AddBatch and added to by merges.
// Rounds of 17 Seen or Add and a batch of 27 make several blocks per
// table after the first and a dozen or more by the last (rounds of 40
// and 60 with SIMCRAWL_BIG=1).
func TestBoltBlocksMatchOracle(t *testing.T) {
	seed := testSeed(t)
	ctx := context.Background()
	singles, batched := testSize(17, 40), testSize(27, 60)
	for _, l := range testLayouts(t) {
		t.Run(l.Name(), func(t *testing.T) {
			t.Parallel() // each layout has its own index file, oracle and generator
			rng := rand.New(rand.NewPCG(seed, uint64(len(l.Name()))+13))
			path := filepath.Join(t.TempDir(), "x.db")
			per := 2 + rng.IntN(6)
			o := oracle{}
			var bases, queries []Fingerprint
			id := uint64(0)
			next := func() Fingerprint {
				if len(bases) > 0 && rng.IntN(2) == 0 {
					return plant(rng, bases[rng.IntN(len(bases))], rng.IntN(testMaxK(l)+3))
				}
				fp := Fingerprint(rng.Uint64())
				bases = append(bases, fp)
				return fp
			}
			withMem := func(mem bool) *BoltIndex {
				o := BoltOptions{Layout: l, NoSync: true}
				if mem {
					o.MemoryLimit = 1 << 30
				}
				x := openBoltBlocksWith(t, path, per, o)
				if x.HoldsTablesInMemory() != mem {
					t.Fatalf("HoldsTablesInMemory() = %v, want %v", !mem, mem)
				}
				return x
			}
			for round := range 3 {
				x := withMem(round%2 == 0)
				for range singles {
					id += 1 + uint64(rng.IntN(1000)) // ids of 1 to 3 bytes
					fp := next()
					queries = append(queries, plant(rng, fp, rng.IntN(testMaxK(l)+2)))
					switch rng.IntN(2) {
					case 0:
						ms := o.linear(fp, l.K())
						m, found, err := x.Seen(ctx, id, fp)
						if err != nil || found != (len(ms) > 0) || found && m != ms[0] {
							t.Fatalf("round %d: Seen(%d, %v) = %+v, %v, %v; oracle %v", round, id, fp, m, found, err, ms)
						}
						if !found {
							o.add(id, fp)
						}
					default:
						add(t, x, id, fp)
						o.add(id, fp)
					}
				}
				var ids []uint64
				var fps []Fingerprint
				for range batched {
					id += 1 + uint64(rng.IntN(1<<20))
					fp := next()
					ids, fps = append(ids, id), append(fps, fp)
					o.add(id, fp)
				}
				if err := x.AddBatch(ctx, ids, fps); err != nil {
					t.Fatal(err)
				}
				if b := slices.Min(checkBlocks(t, x, o)); b < 4 {
					t.Fatalf("round %d: a table of %d blocks: want several", round, b)
				}
				checkNear(t, x, l, o, queries)
				if x.HoldsTablesInMemory() != (round%2 == 0) {
					t.Fatalf("round %d: HoldsTablesInMemory() = %v after AddBatch and merges", round, x.HoldsTablesInMemory())
				}
				if err := x.Close(); err != nil {
					t.Fatal(err)
				}
			}
			x := withMem(true)
			checkBlocks(t, x, o)
			checkNear(t, x, l, o, queries)
		})
	}
}

// TestOpenBoltOldFormat opens an index written in format 1 (no format key
// in meta): the error asks for a rebuild.
func TestOpenBoltOldFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		top, err := tx.CreateBucket([]byte("contentseen"))
		if err != nil {
			return err
		}
		meta, err := top.CreateBucket(metaBucket)
		if err != nil {
			return err
		}
		if err := meta.Put(layoutKey, []byte(Layout4x16)); err != nil {
			return err
		}
		return meta.Put(schemeKey, []byte("words"))
	})
	if cerr := db.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	x, err := OpenBolt(path, BoltOptions{Scheme: "words"})
	if err == nil {
		x.Close()
		t.Fatal("OpenBolt of a format 1 index succeeded, want error")
	}
	for _, want := range []string{"format 1", "rebuild the index"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestMergeStepBound checks the package doc's promise that a merge runs
// in steps of about mergeStepBlocks rewritten blocks, so that a Seen
// waits for one short step, never for a whole merge: also into an empty
// table (an index grown from empty by Seen: its first merge) and past a
// table's last block, where a run takes all the remaining entries.
func TestMergeStepBound(t *testing.T) {
	l := DefaultLayout()
	x := mustOpenBolt(t, filepath.Join(t.TempDir(), "x.db"), BoltOptions{Layout: l, NoSync: true})
	x.blockLimit = 200
	x.minDelta = 1 << 30
	r := rand.New(rand.NewPCG(1, 1))
	err := x.db.Update(func(tx *bolt.Tx) error {
		for i := range 20000 {
			if err := x.AddTx(tx, uint64(i+1), Fingerprint(r.Uint64())); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	blocks := func(tab int) int {
		n := 0
		err := x.db.View(func(tx *bolt.Tx) error {
			top, err := x.top(tx)
			if err != nil {
				return err
			}
			c := top.Bucket(tablesBucket).Cursor()
			for k, _ := c.Seek(blockKey(tab, 0)); len(k) == 9 && int(k[0]) == tab; k, _ = c.Next() {
				n++
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
		return n
	}
	last := make([]int, l.Tables())
	most := 0
	x.afterMergeStep = func(tab int) {
		n := blocks(tab)
		most = max(most, n-last[tab])
		last[tab] = n
	}
	if err := x.Checkpoint(context.Background()); err != nil {
		t.Fatal(err)
	}
	if most > 2*mergeStepBlocks {
		t.Errorf("one merge step wrote %d blocks (mergeStepBlocks %d)", most, mergeStepBlocks)
	}
}
