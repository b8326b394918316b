package frontier

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// model is the simple oracle for the frontier: everything in maps, the next
// URL found by a linear scan.
type model struct {
	limit    int
	seq      uint64
	seen     map[string]bool
	pending  map[string]mItem
	inflight map[string]mItem
	retry    []mItem // due at once (the test clock stands still), in Retry order
	done     int
	failed   int
	hostOut  map[string]int
}

type mItem struct {
	it  Item
	key qkey
}

func (m *model) add(items []Item) int {
	n := 0
	for _, it := range items {
		if m.seen[it.URL] {
			continue
		}
		m.seen[it.URL] = true
		m.seq++
		m.pending[it.URL] = mItem{it, qkey{uint32(it.Depth), m.seq}}
		n++
	}
	return n
}

// next returns what Next must hand out, or ok=false if nothing is eligible.
func (m *model) next() (mItem, bool) {
	for _, r := range m.retry {
		m.seq++
		r.key = qkey{uint32(r.it.Depth), m.seq}
		m.pending[r.it.URL] = r
	}
	m.retry = nil
	var best mItem
	found := false
	for _, p := range m.pending {
		if m.hostOut[HostKey(p.it.URL)] >= m.limit {
			continue
		}
		if !found || p.key.less(best.key) {
			best, found = p, true
		}
	}
	return best, found
}

func TestModel(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	clk := newClock()
	opts := Options{PerHostInFlight: 2, PerHostDelay: -1, Now: clk.Now}
	path := filepath.Join(t.TempDir(), "model.db")
	db := openDB(t, path)
	defer func() { db.Close() }()
	f, err := New(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	m := &model{limit: 2, seen: map[string]bool{}, pending: map[string]mItem{},
		inflight: map[string]mItem{}, hostOut: map[string]int{}}
	ctx := context.Background()
	randomInflight := func() (Item, bool) {
		for _, it := range m.inflight { // map order is random enough
			return it.it, true
		}
		return Item{}, false
	}
	for op := range 1500 {
		switch r := rng.IntN(100); {
		case r < 25: // add a page's links
			var items []Item
			for range 1 + rng.IntN(5) {
				items = append(items, Item{
					URL:   fmt.Sprintf("http://h%d.example/p%d", rng.IntN(6), rng.IntN(60)),
					Depth: rng.IntN(4),
				})
			}
			if rng.IntN(8) == 0 { // rolled back: no effect anywhere
				err := db.Update(func(tx *bolt.Tx) error {
					if _, err := f.AddTx(tx, items...); err != nil {
						return err
					}
					return errRollback
				})
				if !errors.Is(err, errRollback) {
					t.Fatalf("op %d: rolled-back AddTx: %v", op, err)
				}
				continue
			}
			got, err := f.Add(ctx, items...)
			if want := m.add(items); err != nil || got != want {
				t.Fatalf("op %d: Add = %d, %v; want %d", op, got, err, want)
			}
		case r < 60: // next
			want, ok := m.next()
			if !ok {
				if len(m.pending) == 0 && len(m.inflight) == 0 {
					if _, err := f.Next(ctx); !errors.Is(err, ErrDrained) {
						t.Fatalf("op %d: Next = %v, want ErrDrained", op, err)
					}
				}
				continue // all hosts busy: Next would block
			}
			got, err := f.Next(ctx)
			if err != nil {
				t.Fatalf("op %d: Next: %v", op, err)
			}
			if got.URL != want.it.URL || got.Depth != want.it.Depth || got.Attempts != want.it.Attempts {
				t.Fatalf("op %d: Next = %+v, want %+v (key %v)", op, got, want.it, want.key)
			}
			delete(m.pending, got.URL)
			m.inflight[got.URL] = want
			m.hostOut[HostKey(got.URL)]++
		case r < 90: // complete an in-flight URL
			it, ok := randomInflight()
			if !ok {
				continue
			}
			mi := m.inflight[it.URL]
			delete(m.inflight, it.URL)
			m.hostOut[HostKey(it.URL)]--
			switch rng.IntN(4) {
			case 0:
				err = f.Retry(ctx, it, 0, "flaky")
				mi.it.Attempts++
				mi.it.LastError = "flaky"
				m.retry = append(m.retry, mi)
			case 1:
				err = f.Fail(ctx, it, "broken")
				m.failed++
			default:
				err = f.Done(ctx, it, "stored")
				m.done++
			}
			if err != nil {
				t.Fatalf("op %d: completing %s: %v", op, it.URL, err)
			}
		case r < 93: // crash and resume
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db = openDB(t, path)
			if f, err = New(db, opts); err != nil {
				t.Fatalf("op %d: reopen: %v", op, err)
			}
			for url, mi := range m.inflight {
				m.pending[url] = mi
			}
			m.inflight = map[string]mItem{}
			m.hostOut = map[string]int{}
		default: // counts agree
			want := Stats{Pending: len(m.pending) + len(m.retry), InFlight: len(m.inflight), Done: m.done, Failed: m.failed}
			got := f.Stats()
			got.Hosts = 0
			if got != want {
				t.Fatalf("op %d: Stats = %+v, want %+v", op, got, want)
			}
		}
	}
}

var errRollback = errors.New("roll back")
