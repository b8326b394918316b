package contentseen

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
)

// bruteJoin is the oracle of a batch join: every (batch, stored) pair
// within k, by comparing all of them.
func bruteJoin(batch []uint64, bfps []Fingerprint, stored []uint64, sfps []Fingerprint, k int) []Pair {
	var out []Pair
	for s, f := range sfps {
		for b, g := range bfps {
			if d := Distance(f, g); d <= k {
				out = append(out, Pair{BatchID: batch[b], StoredID: stored[s], Distance: d})
			}
		}
	}
	sortPairs(out)
	return out
}

func sortPairs(ps []Pair) {
	slices.SortFunc(ps, func(a, b Pair) int {
		switch {
		case a.BatchID != b.BatchID:
			return cmpU64(a.BatchID, b.BatchID)
		case a.StoredID != b.StoredID:
			return cmpU64(a.StoredID, b.StoredID)
		}
		return a.Distance - b.Distance
	})
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// flipBits returns fp with d distinct random bits flipped.
func flipBits(r *rand.Rand, fp Fingerprint, d int) Fingerprint {
	for _, i := range r.Perm(64)[:d] {
		fp ^= 1 << i
	}
	return fp
}

// joinInput is a random batch and stored set with planted neighbours of
// batch fingerprints at every distance 0..k+1, repeated fingerprints in
// both sets, and flips confined to one 16-bit block (so that several
// tables agree).
func joinInput(r *rand.Rand, k int) (batch []uint64, bfps []Fingerprint, stored []uint64, sfps []Fingerprint) {
	for i := range 300 {
		batch = append(batch, uint64(1000+i))
		bfps = append(bfps, Fingerprint(r.Uint64()))
	}
	batch = append(batch, 2000) // a repeated batch fingerprint under another id
	bfps = append(bfps, bfps[7])
	add := func(fp Fingerprint) {
		stored = append(stored, uint64(len(stored)+1))
		sfps = append(sfps, fp)
	}
	for range 2000 {
		add(Fingerprint(r.Uint64()))
	}
	for i := range 100 {
		b := bfps[r.IntN(len(bfps))]
		for d := 0; d <= k+1; d++ {
			add(flipBits(r, b, d))
		}
		if i%10 == 0 { // flips within the low block only
			add(b ^ Fingerprint(1<<r.IntN(16)))
		}
	}
	add(sfps[len(sfps)-1]) // a repeated stored fingerprint
	r.Shuffle(len(sfps), func(i, j int) { sfps[i], sfps[j] = sfps[j], sfps[i] })
	return batch, bfps, stored, sfps
}

func TestJoinAgainstBruteForce(t *testing.T) {
	seed := testSeed(t)
	for _, name := range []string{Layout4x16, Layout10x28, LayoutGoogle16, "k2/22-21-21/lead1"} {
		l, err := LayoutByName(name)
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k <= l.K(); k++ {
			r := rand.New(rand.NewPCG(seed, uint64(k)))
			batch, bfps, stored, sfps := joinInput(r, k)
			want := bruteJoin(batch, bfps, stored, sfps, k)
			j, err := NewJoiner(l, k, batch, bfps)
			if err != nil {
				t.Fatal(err)
			}
			var got []Pair
			err = JoinPartitions(context.Background(), j, SplitSlices(stored, sfps, 5), 3, func(p Pair) error {
				got = append(got, p)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			sortPairs(got)
			if !slices.Equal(got, want) {
				t.Errorf("layout %s k=%d: join found %d pairs, brute force %d\n got %v\nwant %v", name, k, len(got), len(want), got, want)
			}
			if len(want) < 100 {
				t.Errorf("layout %s k=%d: only %d pairs: planting is broken", name, k, len(want))
			}
		}
	}
}

// The output order is the partition order, whatever the number of workers.
func TestJoinPartitionsDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(testSeed(t), 1))
	batch, bfps, stored, sfps := joinInput(r, 3)
	j, err := NewJoiner(DefaultLayout(), 3, batch, bfps)
	if err != nil {
		t.Fatal(err)
	}
	collect := func(workers int) []Pair {
		var got []Pair
		err := JoinPartitions(context.Background(), j, SplitSlices(stored, sfps, 7), workers, func(p Pair) error {
			got = append(got, p)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	one := collect(1)
	// Probe serially in stored order gives the same sequence.
	var serial []Pair
	for i, fp := range sfps {
		if err := j.Probe(stored[i], fp, func(p Pair) error { serial = append(serial, p); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(one, serial) {
		t.Errorf("JoinPartitions with 1 worker differs from serial Probe")
	}
	for _, w := range []int{2, 4, 16} {
		if got := collect(w); !slices.Equal(got, one) {
			t.Errorf("JoinPartitions with %d workers: order differs from 1 worker", w)
		}
	}
}

type failSource struct{ n int }

func (s *failSource) Next() (uint64, Fingerprint, error) {
	if s.n == 0 {
		return 0, 0, errors.New("disk on fire")
	}
	s.n--
	return uint64(s.n), Fingerprint(s.n), nil
}

func TestJoinPartitionsErrors(t *testing.T) {
	j, err := NewJoiner(DefaultLayout(), 3, []uint64{1}, []Fingerprint{5})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	parts := []FingerprintSource{SliceSource([]uint64{1}, []Fingerprint{5}), &failSource{n: 3}}
	err = JoinPartitions(ctx, j, parts, 2, func(Pair) error { return nil })
	if err == nil || err.Error() != "contentseen: join: partition 1: disk on fire" {
		t.Errorf("source error: got %v", err)
	}
	stop := errors.New("stop")
	err = JoinPartitions(ctx, j, SplitSlices([]uint64{1, 2}, []Fingerprint{5, 4}, 2), 2, func(Pair) error { return stop })
	if !errors.Is(err, stop) {
		t.Errorf("emit error: got %v, want %v", err, stop)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	err = JoinPartitions(cctx, j, SplitSlices([]uint64{1}, []Fingerprint{5}, 1), 1, func(Pair) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: got %v", err)
	}
	if err := JoinPartitions(ctx, j, nil, 4, func(Pair) error { return nil }); err != nil {
		t.Errorf("no partitions: %v", err)
	}
}

func TestNewJoinerRejects(t *testing.T) {
	l := DefaultLayout()
	for _, tc := range []struct {
		name string
		l    Layout
		k    int
		ids  []uint64
		fps  []Fingerprint
	}{
		{"k too large", l, 4, nil, nil},
		{"negative k", l, -1, nil, nil},
		{"zero layout", Layout{}, 3, nil, nil},
		{"length mismatch", l, 3, []uint64{1}, nil},
	} {
		if _, err := NewJoiner(tc.l, tc.k, tc.ids, tc.fps); err == nil {
			t.Errorf("%s: NewJoiner succeeded", tc.name)
		}
	}
	j, err := NewJoiner(l, 3, nil, nil) // an empty batch finds nothing
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Probe(1, 42, func(p Pair) error { return errors.New("unexpected pair") }); err != nil {
		t.Error(err)
	}
	if _, _, err := SliceSource(nil, nil).Next(); err != io.EOF {
		t.Errorf("empty SliceSource: %v, want io.EOF", err)
	}
}

// The gathered prefix is the top PrefixBits of Permute, for every table.
func TestJoinPrefixMatchesPermute(t *testing.T) {
	r := rand.New(rand.NewPCG(testSeed(t), 2))
	for _, name := range []string{Layout4x16, Layout10x28, LayoutGoogle16} {
		l, err := LayoutByName(name)
		if err != nil {
			t.Fatal(err)
		}
		for tb := range l.Tables() {
			jt := joinTable{gather: gatherOf(l, tb)} // the slow path; NewJoiner sets the short one
			for range 100 {
				fp := Fingerprint(r.Uint64())
				if got, want := jt.prefixOf(fp), l.Permute(tb, fp)>>(64-l.PrefixBits(tb)); got != want {
					t.Fatalf("%s table %d: prefix of %v = %#x, want %#x", name, tb, fp, got, want)
				}
			}
		}
	}
}

// TestMapMergeEmitErrorCancelsWork checks that an error from emit cancels
// the context of units still running: unit 1 waits for its context, and
// emit fails on unit 0's pair. With the caller's context instead, unit 1
// would wait for ever.
func TestMapMergeEmitErrorCancelsWork(t *testing.T) {
	stop := errors.New("emit: disk full")
	err := MapMerge(context.Background(), 2, 2, func(ctx context.Context, i int) ([]Pair, error) {
		if i == 1 {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return []Pair{{BatchID: 1, StoredID: 2}}, nil
	}, func(Pair) error { return stop })
	if err != stop {
		t.Fatalf("MapMerge = %v, want emit's error", err)
	}
}
