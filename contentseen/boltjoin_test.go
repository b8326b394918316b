package contentseen

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// joinIndexInput is a stored set of n random fingerprints with, around
// 200 of the batch's, planted neighbours at every distance 0..k+1 (flips
// anywhere, so that different tables report them, and some within one
// 16-bit block, so that several tables agree), and repeated stored
// fingerprints under other ids; and a batch of nb random fingerprints with
// a few repeated under other ids. Stored ids are 1..len; batch ids start
// at 1e9.
func joinIndexInput(r *rand.Rand, n, nb, k int) (batch []uint64, bfps []Fingerprint, stored []uint64, sfps []Fingerprint) {
	return joinIndexInputFrom(r, n, nb, k, func() Fingerprint { return Fingerprint(r.Uint64()) })
}

// clustered draws fingerprints whose 16-bit blocks come from few values:
// one block in ten from 8 values, the rest from 150. A batch of 5000 so
// drawn has prefix groups of about 30 entries in every 4x16 table, and of
// about 60 (some past 64) for the 8 values.
func clustered(r *rand.Rand) func() Fingerprint {
	var few, many [4][]uint64
	for b := range 4 {
		for range 8 {
			few[b] = append(few[b], r.Uint64()&0xffff)
		}
		for range 150 {
			many[b] = append(many[b], r.Uint64()&0xffff)
		}
	}
	return func() Fingerprint {
		var fp uint64
		for b := range 4 {
			vs := many[b]
			if r.IntN(10) == 0 {
				vs = few[b]
			}
			fp |= vs[r.IntN(len(vs))] << (16 * b)
		}
		return Fingerprint(fp)
	}
}

// joinIndexInputFrom is joinIndexInput with the batch, and every other of
// the n unplanted stored fingerprints, drawn by gen.
func joinIndexInputFrom(r *rand.Rand, n, nb, k int, gen func() Fingerprint) (batch []uint64, bfps []Fingerprint, stored []uint64, sfps []Fingerprint) {
	for i := range nb {
		batch = append(batch, uint64(1e9+i))
		bfps = append(bfps, gen())
	}
	for i := range 5 { // repeated batch fingerprints
		batch = append(batch, uint64(2e9+i))
		bfps = append(bfps, bfps[r.IntN(nb)])
	}
	add := func(fp Fingerprint) {
		stored = append(stored, uint64(len(stored)+1))
		sfps = append(sfps, fp)
	}
	for i := range n {
		if i%2 == 0 {
			add(gen())
		} else {
			add(Fingerprint(r.Uint64()))
		}
	}
	for i := range 200 {
		b := bfps[r.IntN(len(bfps))]
		for d := 0; d <= k+1; d++ {
			add(flipBits(r, b, d))
		}
		if i%4 == 0 { // within the low block only: every table but one agrees
			add(b ^ Fingerprint(1<<r.IntN(16)) ^ Fingerprint(1<<r.IntN(16)))
		}
	}
	for range 50 { // repeated stored fingerprints: the index keeps the first id
		add(sfps[r.IntN(len(sfps))])
	}
	r.Shuffle(len(sfps), func(i, j int) { sfps[i], sfps[j] = sfps[j], sfps[i] })
	return batch, bfps, stored, sfps
}

// firstIDs is what an index records of (ids, fps) added in order: the
// first id of each distinct fingerprint.
func firstIDs(ids []uint64, fps []Fingerprint) ([]uint64, []Fingerprint) {
	seen := map[Fingerprint]bool{}
	var oi []uint64
	var of []Fingerprint
	for i, fp := range fps {
		if !seen[fp] {
			seen[fp] = true
			oi, of = append(oi, ids[i]), append(of, fp)
		}
	}
	return oi, of
}

// joinIndex runs JoinTx in a read transaction and returns the pairs in
// the order emitted.
func joinIndex(t testing.TB, x *BoltIndex, j *Joiner) []Pair {
	t.Helper()
	var got []Pair
	err := x.db.View(func(tx *bolt.Tx) error {
		return x.JoinTx(context.Background(), tx, j, func(p Pair) error {
			got = append(got, p)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// openJoinIndex opens an index with blocks of at most blockLimit bytes
// and no background merge, bulk-loads the first part of the stored set
// with AddBatch and records the rest with AddTx, so that it stays in the
// delta.
func openJoinIndex(t testing.TB, l Layout, blockLimit int, stored []uint64, sfps []Fingerprint, inBlocks int) *BoltIndex {
	t.Helper()
	x := mustOpenBolt(t, filepath.Join(t.TempDir(), "join.db"), BoltOptions{Layout: l, NoSync: true})
	x.blockLimit = blockLimit
	x.minDelta = 1 << 30 // merges only by Checkpoint
	if err := x.AddBatch(context.Background(), stored[:inBlocks], sfps[:inBlocks]); err != nil {
		t.Fatal(err)
	}
	err := x.db.Update(func(tx *bolt.Tx) error {
		for i := inBlocks; i < len(sfps); i++ {
			if err := x.AddTx(tx, stored[i], sfps[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// JoinTx finds the same multiset of pairs as JoinPartitions over the
// fingerprints the index records, and as brute force: for both built-in
// layouts, every k, a sparse and a dense batch and one whose prefix
// groups hold tens of entries (batch=-5000), blocks of a few entries
// (every block stepped over or sought) and of hundreds (restart points
// skipped within a block), part of the stored set in the delta; again in
// a snapshot taken after each step of a merge (an entry both in the delta
// and in the tables merged so far), and once the delta is merged.
func TestJoinIndexAgainstJoinPartitions(t *testing.T) {
	seed := testSeed(t)
	for _, name := range []string{Layout4x16, Layout10x28} {
		l, err := LayoutByName(name)
		if err != nil {
			t.Fatal(err)
		}
		// Blocks of a few entries: about 9 (60 bytes) at the small size
		// (600 random and 1,000 planted stored fingerprints, batches of 150
		// and 300), so that each table still has about 180 blocks and its
		// merge takes several steps of mergeStepBlocks; the large blocks
		// hold hundreds (3 or 4 a table).
		for _, blockLimit := range []int{testSize(60, 200), maxBlock} {
			nbig := testSize(300, 5000)
			for _, nb := range []int{testSize(150, 300), nbig, -nbig} {
				t.Run(fmt.Sprintf("layout=%s/block=%d/batch=%d", name, blockLimit, nb), func(t *testing.T) {
					t.Parallel() // each case has its own index, generator and temp dir
					r := rand.New(rand.NewPCG(seed, uint64(nb+blockLimit)))
					gen := func() Fingerprint { return Fingerprint(r.Uint64()) }
					if nb < 0 { // prefix groups of tens of entries
						nb, gen = -nb, clustered(r)
					}
					batch, bfps, stored, sfps := joinIndexInputFrom(r, testSize(600, 30000), nb, l.K(), gen)
					inBlocks := len(sfps) * 3 / 4
					x := openJoinIndex(t, l, blockLimit, stored, sfps, inBlocks)
					fids, ffps := firstIDs(stored, sfps)

					var js []*Joiner
					var wants [][]Pair
					for k := 0; k <= l.K(); k++ {
						j, err := NewJoiner(l, k, batch, bfps)
						if err != nil {
							t.Fatal(err)
						}
						var want []Pair
						err = JoinPartitions(context.Background(), j, SplitSlices(fids, ffps, 4), 2, func(p Pair) error {
							want = append(want, p)
							return nil
						})
						if err != nil {
							t.Fatal(err)
						}
						sortPairs(want)
						if k == l.K() {
							if brute := bruteJoin(batch, bfps, fids, ffps, k); !slices.Equal(want, brute) {
								t.Fatalf("k=%d: JoinPartitions finds %d pairs, brute force %d", k, len(want), len(brute))
							}
							if len(want) < 200 {
								t.Fatalf("only %d pairs within %d: planting is broken", len(want), k)
							}
						}
						js, wants = append(js, j), append(wants, want)
					}
					check := func(when string) {
						t.Helper()
						for k, j := range js {
							got := joinIndex(t, x, j)
							sortPairs(got)
							if !slices.Equal(got, wants[k]) {
								t.Fatalf("%s, k=%d: JoinTx found %d pairs, JoinPartitions %d\n%s", when, k, len(got), len(wants[k]), pairDiff(got, wants[k]))
							}
						}
					}
					check("delta")
					if n := deltaLen(t, x); n == 0 {
						t.Fatal("nothing in the delta")
					}
					// Snapshots in the middle of the merge: the first step
					// into each table, and every 16th (tiny blocks make
					// hundreds of steps, each checked by whole joins).
					steps, lastTable := 0, -1
					x.afterMergeStep = func(table int) {
						steps++
						if table != lastTable || steps%16 == 0 {
							lastTable = table
							check(fmt.Sprintf("after merge step %d, into table %d", steps, table))
						}
					}
					if err := x.Checkpoint(context.Background()); err != nil {
						t.Fatal(err)
					}
					x.afterMergeStep = nil
					if steps < l.Tables() || blockLimit < maxBlock && steps < 2*l.Tables() {
						t.Fatalf("%d merge steps into %d tables of %d-byte blocks", steps, l.Tables(), blockLimit)
					}
					if n := deltaLen(t, x); n != 0 {
						t.Fatalf("%d entries in the delta after Checkpoint", n)
					}
					check("merged")
				})
			}
		}
	}
}

// deltaLen returns the number of entries in x's delta bucket.
func deltaLen(t testing.TB, x *BoltIndex) int {
	t.Helper()
	n := 0
	err := x.db.View(func(tx *bolt.Tx) error {
		top, err := x.top(tx)
		if err != nil {
			return err
		}
		n = top.Bucket(deltaBucket).Stats().KeyN
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// pairDiff lists the pairs only one of got and want (sorted) holds.
func pairDiff(got, want []Pair) string {
	var b strings.Builder
	count := func(ps []Pair) map[Pair]int {
		m := map[Pair]int{}
		for _, p := range ps {
			m[p]++
		}
		return m
	}
	g, w := count(got), count(want)
	for p, n := range g {
		if w[p] != n {
			fmt.Fprintf(&b, "got %+v ×%d, want ×%d\n", p, n, w[p])
		}
	}
	for p, n := range w {
		if _, ok := g[p]; !ok {
			fmt.Fprintf(&b, "missing %+v ×%d\n", p, n)
		}
	}
	return b.String()
}

// The order JoinTx documents: table by table, within a table by the
// stored entry's permuted value, then the delta's pairs; the same on
// every run.
func TestJoinIndexOrder(t *testing.T) {
	l := DefaultLayout()
	r := rand.New(rand.NewPCG(testSeed(t), 3))
	batch, bfps, stored, sfps := joinIndexInput(r, 5000, 300, 3)
	x := openJoinIndex(t, l, 200, stored, sfps, len(sfps)*3/4)
	j, err := NewJoiner(l, 3, batch, bfps)
	if err != nil {
		t.Fatal(err)
	}
	got := joinIndex(t, x, j)
	if again := joinIndex(t, x, j); !slices.Equal(got, again) {
		t.Fatal("two joins of the same snapshot emit different orders")
	}
	fpOf := map[uint64]Fingerprint{}
	for i, id := range stored {
		fpOf[id] = sfps[i]
	}
	bfpOf := map[uint64]Fingerprint{}
	for i, id := range batch {
		bfpOf[id] = bfps[i]
	}
	inDelta := map[uint64]bool{}
	for _, id := range stored[len(sfps)*3/4:] {
		inDelta[id] = true
	}
	// The table that reports a pair: the first whose prefix they share.
	tableOf := func(p Pair) int {
		for tb := range l.Tables() {
			if lo, hi := l.prefixRange(tb, l.Permute(tb, bfpOf[p.BatchID])); l.Permute(tb, fpOf[p.StoredID]) >= lo && l.Permute(tb, fpOf[p.StoredID]) <= hi {
				return tb
			}
		}
		return -1
	}
	lastTable, lastKey, delta := 0, uint64(0), false
	for _, p := range got {
		if inDelta[p.StoredID] {
			delta = true
			continue
		}
		if delta {
			t.Fatalf("pair %+v from the blocks after the delta's", p)
		}
		tb := tableOf(p)
		key := l.Permute(tb, fpOf[p.StoredID])
		if tb < lastTable || tb == lastTable && key < lastKey {
			t.Fatalf("pair %+v (table %d, key %#x) after table %d key %#x", p, tb, key, lastTable, lastKey)
		}
		lastTable, lastKey = tb, key
	}
	if !delta || lastTable == 0 {
		t.Fatalf("the input has no pairs from the delta or from tables after 0 (delta %v, last table %d)", delta, lastTable)
	}
}

func TestJoinIndexErrors(t *testing.T) {
	l := DefaultLayout()
	r := rand.New(rand.NewPCG(testSeed(t), 4))
	batch, bfps, stored, sfps := joinIndexInput(r, 2000, 100, 3)
	x := openJoinIndex(t, l, 200, stored, sfps, len(sfps)/2)
	ctx := context.Background()

	other, err := LayoutByName(Layout10x28)
	if err != nil {
		t.Fatal(err)
	}
	j, err := NewJoiner(other, 3, batch, bfps)
	if err != nil {
		t.Fatal(err)
	}
	emitted := 0
	err = x.db.View(func(tx *bolt.Tx) error {
		return x.JoinTx(ctx, tx, j, func(Pair) error { emitted++; return nil })
	})
	if err == nil || !strings.Contains(err.Error(), "batch layout 10x28, index layout 4x16") || emitted != 0 {
		t.Errorf("layout mismatch: err %v after %d pairs", err, emitted)
	}

	j, err = NewJoiner(l, 3, batch, bfps)
	if err != nil {
		t.Fatal(err)
	}
	all := joinIndex(t, x, j)
	// emit's error is returned as is, from the blocks' pairs and from the
	// delta's (the last pair comes from the delta).
	stop := errors.New("stop")
	for _, at := range []int{0, len(all) - 1} {
		n := 0
		err = x.db.View(func(tx *bolt.Tx) error {
			return x.JoinTx(ctx, tx, j, func(Pair) error {
				if n == at {
					return stop
				}
				n++
				return nil
			})
		})
		if err != stop {
			t.Errorf("emit error at pair %d: got %v, want it as is", at, err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	err = x.db.View(func(tx *bolt.Tx) error {
		return x.JoinTx(cctx, tx, j, func(Pair) error { return nil })
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: got %v", err)
	}

	// An empty index and an empty batch find nothing.
	empty := mustOpenBolt(t, filepath.Join(t.TempDir(), "empty.db"), BoltOptions{Layout: l, NoSync: true})
	if got := joinIndex(t, empty, j); len(got) != 0 {
		t.Errorf("empty index: %d pairs", len(got))
	}
	none, err := NewJoiner(l, 3, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := joinIndex(t, x, none); len(got) != 0 {
		t.Errorf("empty batch: %d pairs", len(got))
	}
}

// Units from JoinUnits cover every table's batch entries in order, end at
// prefix boundaries, and their pairs, each unit run in its own read
// transaction on its own goroutine, concatenated in unit order, are
// JoinTx's output.
func TestJoinIndexUnits(t *testing.T) {
	l := DefaultLayout()
	r := rand.New(rand.NewPCG(testSeed(t), 5))
	// A batch of more than two units per table.
	batch, bfps, stored, sfps := joinIndexInput(r, 20000, 2*joinUnitEntries+5000, 3)
	x := openJoinIndex(t, l, maxBlock, stored, sfps, len(sfps)*3/4)
	j, err := NewJoiner(l, 3, batch, bfps)
	if err != nil {
		t.Fatal(err)
	}
	us, err := x.JoinUnits(j)
	if err != nil {
		t.Fatal(err)
	}
	next := 0
	for i, u := range us {
		if u.Table == -1 {
			if i != len(us)-1 {
				t.Fatalf("unit %d is the delta, not last of %d", i, len(us))
			}
			continue
		}
		jt := &j.tables[u.Table]
		if u.From != next%len(jt.fps) || u.To <= u.From {
			t.Fatalf("unit %d = %+v after entry %d", i, u, next)
		}
		if u.To < len(jt.fps) && jt.prefixOf(jt.fps[u.To]) == jt.prefixOf(jt.fps[u.To-1]) {
			t.Fatalf("unit %d = %+v splits a prefix group", i, u)
		}
		next = u.To
	}
	if len(us) < 3*l.Tables()+1 {
		t.Fatalf("%d units, want at least 3 per table and the delta", len(us))
	}

	want := joinIndex(t, x, j)
	parts := make([][]Pair, len(us))
	errs := make(chan error, len(us))
	for i, u := range us {
		go func() {
			errs <- x.db.View(func(tx *bolt.Tx) error {
				var err error
				parts[i], err = x.JoinUnitTx(context.Background(), tx, j, u, nil)
				return err
			})
		}()
	}
	for range us {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := slices.Concat(parts...); !slices.Equal(got, want) {
		t.Errorf("units concatenated: %d pairs, JoinTx %d, or another order", len(got), len(want))
	}
	if len(want) < 500 {
		t.Errorf("only %d pairs", len(want))
	}
	err = x.db.View(func(tx *bolt.Tx) error {
		_, err := x.JoinUnitTx(context.Background(), tx, j, JoinUnit{Table: 0, From: 5, To: 1}, nil)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "bad unit") {
		t.Errorf("bad unit: %v", err)
	}
}
