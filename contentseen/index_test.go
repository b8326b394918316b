package contentseen

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

var (
	_ Index = (*MemIndex)(nil)
	_ Index = (*BoltIndex)(nil)
)

func TestMemIndexContract(t *testing.T) {
	testIndex(t, func(t testing.TB) Index { return NewMemIndex(Layout{}) }, nil)
}

func TestBoltIndexContract(t *testing.T) {
	var path string // of the index opened last, for reopen
	open := func(t testing.TB) Index {
		path = filepath.Join(t.TempDir(), "index.db")
		return mustOpenBolt(t, path, BoltOptions{NoSync: true})
	}
	reopen := func(t testing.TB) Index { return mustOpenBolt(t, path, BoltOptions{NoSync: true}) }
	testIndex(t, open, reopen)
}

func mustOpenBolt(t testing.TB, path string, o BoltOptions) *BoltIndex {
	t.Helper()
	x, err := OpenBolt(path, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := x.Close(); err != nil && !errors.Is(err, ErrClosed) {
			t.Error(err)
		}
	})
	return x
}

// testIndex is the contract every Index implementation must meet. open
// returns a new empty index with the default layout (k=3); reopen, when
// not nil, opens again the index open returned last, after it was closed.
func testIndex(t *testing.T, open func(t testing.TB) Index, reopen func(t testing.TB) Index) {
	ctx := context.Background()
	const q = Fingerprint(0x0123456789abcdef)

	t.Run("Empty", func(t *testing.T) {
		x := open(t)
		if n := x.Len(); n != 0 {
			t.Errorf("Len() = %d, want 0", n)
		}
		if ms, err := x.Near(ctx, q, 3); err != nil || len(ms) != 0 {
			t.Errorf("Near on empty index = %v, %v; want none", ms, err)
		}
	})

	t.Run("SeenAdmitsThenFinds", func(t *testing.T) {
		x := open(t)
		seen(t, x, 1, q, false, Match{})
		seen(t, x, 2, q, true, Match{ID: 1, Fingerprint: q, Distance: 0})
		seen(t, x, 3, q^0b111, true, Match{ID: 1, Fingerprint: q, Distance: 3})
		seen(t, x, 4, q^0b1111, false, Match{}) // 4 bits away: new
		if n := x.Len(); n != 2 {
			t.Errorf("Len() = %d, want 2", n)
		}
	})

	t.Run("BestMatch", func(t *testing.T) {
		x := open(t)
		// a and b are 2 bits from q and 4 from each other; Add does not look.
		a, b, c := q^0b11, q^0b1100, q^0b110000
		add(t, x, 5, a)
		add(t, x, 2, b)
		seen(t, x, 9, q, true, Match{ID: 2, Fingerprint: b, Distance: 2}) // tie: smallest id
		add(t, x, 7, c^1)                                                 // 3 bits from q
		add(t, x, 8, q^1<<63)                                             // 1 bit from q
		seen(t, x, 10, q, true, Match{ID: 8, Fingerprint: q ^ 1<<63, Distance: 1})
	})

	t.Run("NearSorted", func(t *testing.T) {
		x := open(t)
		add(t, x, 30, q^0b111)
		add(t, x, 20, q^1<<40)
		add(t, x, 10, q^(1<<40|1<<50))
		add(t, x, 40, q)
		add(t, x, 50, ^q)
		want := []Match{{40, q, 0}, {20, q ^ 1<<40, 1}, {10, q ^ (1<<40 | 1<<50), 2}, {30, q ^ 0b111, 3}}
		ms, err := x.Near(ctx, q, 3)
		if err != nil || !equalMatches(ms, want) {
			t.Errorf("Near(%v, 3) = %v, %v; want %v", q, ms, err, want)
		}
		ms, err = x.Near(ctx, q, 1)
		if err != nil || !equalMatches(ms, want[:2]) {
			t.Errorf("Near(%v, 1) = %v, %v; want %v", q, ms, err, want[:2])
		}
		// Beyond the layout's K, up to MaxK: a multi-probe query.
		add(t, x, 60, q^0b1111<<20)
		wide := append(slices.Clone(want), Match{60, q ^ 0b1111<<20, 4})
		if ms, err := x.Near(ctx, q, 4); err != nil || !equalMatches(ms, wide) {
			t.Errorf("Near(%v, 4) = %v, %v; want %v", q, ms, err, wide)
		}
		for _, k := range []int{-1, DefaultLayout().MaxK() + 1} {
			if _, err := x.Near(ctx, q, k); err == nil {
				t.Errorf("Near(%v, %d) succeeded, want error (layout 4x16, MaxK %d)", q, k, DefaultLayout().MaxK())
			}
		}
	})

	t.Run("AddKeepsFirstID", func(t *testing.T) {
		x := open(t)
		add(t, x, 1, q)
		add(t, x, 2, q)
		if n := x.Len(); n != 1 {
			t.Errorf("Len() = %d after adding one fingerprint twice, want 1", n)
		}
		seen(t, x, 3, q, true, Match{ID: 1, Fingerprint: q})
	})

	t.Run("ConcurrentNearDuplicates", func(t *testing.T) {
		x := open(t)
		// Every two of these are 2 bits apart: exactly one may be admitted.
		const n = 32
		var wg sync.WaitGroup
		admitted := make(chan uint64, n)
		matched := make(chan Match, n)
		for i := range n {
			wg.Go(func() {
				m, found, err := x.Seen(ctx, uint64(100+i), q^1<<uint(2*i))
				switch {
				case err != nil:
					t.Error(err)
				case found:
					matched <- m
				default:
					admitted <- uint64(100 + i)
				}
			})
		}
		wg.Wait()
		close(admitted)
		close(matched)
		if len(admitted) != 1 {
			t.Fatalf("%d of %d near-duplicates admitted, want 1", len(admitted), n)
		}
		id := <-admitted
		for m := range matched {
			if m.ID != id || m.Distance != 2 {
				t.Errorf("match %+v, want id %d at distance 2", m, id)
			}
		}
		if l := x.Len(); l != 1 {
			t.Errorf("Len() = %d, want 1", l)
		}
	})

	t.Run("CancelledContext", func(t *testing.T) {
		x := open(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, _, err := x.Seen(cctx, 1, q); !errors.Is(err, context.Canceled) {
			t.Errorf("Seen with cancelled ctx: err = %v, want context.Canceled", err)
		}
		if _, err := x.Near(cctx, q, 3); !errors.Is(err, context.Canceled) {
			t.Errorf("Near with cancelled ctx: err = %v, want context.Canceled", err)
		}
	})

	t.Run("Closed", func(t *testing.T) {
		x := open(t)
		add(t, x, 1, q)
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := x.Seen(ctx, 2, q); !errors.Is(err, ErrClosed) {
			t.Errorf("Seen after Close: err = %v, want ErrClosed", err)
		}
		if _, err := x.Near(ctx, q, 3); !errors.Is(err, ErrClosed) {
			t.Errorf("Near after Close: err = %v, want ErrClosed", err)
		}
		if err := x.Add(ctx, 2, q); !errors.Is(err, ErrClosed) {
			t.Errorf("Add after Close: err = %v, want ErrClosed", err)
		}
		if n := x.Len(); n != 0 {
			t.Errorf("Len after Close = %d, want 0", n)
		}
		if err := x.Close(); !errors.Is(err, ErrClosed) {
			t.Errorf("second Close: err = %v, want ErrClosed", err)
		}
	})

	if reopen == nil {
		return
	}
	t.Run("Reopen", func(t *testing.T) {
		x := open(t)
		seen(t, x, 1, q, false, Match{})
		seen(t, x, 2, ^q, false, Match{})
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
		y := reopen(t)
		if n := y.Len(); n != 2 {
			t.Errorf("Len() after reopen = %d, want 2", n)
		}
		seen(t, y, 3, q^0b101, true, Match{ID: 1, Fingerprint: q, Distance: 2})
		seen(t, y, 4, q^0xf0f0, false, Match{})
		if err := y.Close(); err != nil {
			t.Fatal(err)
		}
		z := reopen(t)
		if n := z.Len(); n != 3 {
			t.Errorf("Len() after second reopen = %d, want 3", n)
		}
	})
}

func seen(t testing.TB, x Index, id uint64, fp Fingerprint, wantFound bool, want Match) {
	t.Helper()
	m, found, err := x.Seen(context.Background(), id, fp)
	if err != nil || found != wantFound || m != want {
		t.Errorf("Seen(%d, %v) = %+v, %v, %v; want %+v, %v, nil", id, fp, m, found, err, want, wantFound)
	}
}

func add(t testing.TB, x Index, id uint64, fp Fingerprint) {
	t.Helper()
	if err := x.Add(context.Background(), id, fp); err != nil {
		t.Fatalf("Add(%d, %v): %v", id, fp, err)
	}
}

func equalMatches(a, b []Match) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
