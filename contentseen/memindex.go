package contentseen

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
)

// MemIndex is an Index held in memory: per table, a sorted array of
// permuted keys found by a prefix directory (and a short binary search
// while the directory has fewer bits than the prefix), plus a small sorted
// delta that takes inserts and is merged into the array when it grows
// past about sqrt(N) entries. Table 0 keeps the ids, in an array parallel
// to its keys; a match found in another table takes its id from table 0
// (through its directory, only for matches).
//
// Cost: 8 bytes per fingerprint per table and 8 for its id (40 bytes with
// the default 4x16 layout), plus the directories (at most 4 bytes per 8
// keys; 1 MiB for 4x16 from 2^19 keys); an insert at N stored moves
// O(sqrt(N)) keys per table. A query at 10M on 4x16: p50 1.5 to 2.2 µs at
// k=3, 20 to 23 µs at k=7 (68 prefixes), on a shared 2-core machine at
// load 5 to 17 (package doc).
//
// MemIndex is safe for concurrent use: queries share a read lock, inserts
// take the write lock.
type MemIndex struct {
	layout Layout

	mu     sync.RWMutex // guards the fields below
	closed bool
	n      int // distinct fingerprints stored
	tabs   []memTable

	aside func(table int) // tests: called by addBatchAside before it swaps table's new arrays in
}

// memTable is one permuted table.
type memTable struct {
	keys, ids []uint64 // base, sorted by key; ids in table 0 only
	// dir[b] is the index of the first key whose top dirBits bits are >= b;
	// len(dir) = 1<<dirBits + 1. It replaces the first ~20 steps of a binary
	// search, each a cache miss at 10M keys.
	dir     []uint32
	dirBits int
	exact   bool // dirBits is the table's prefix: a bucket is a prefix range

	dkeys, dids []uint64 // delta, sorted by key; dids in table 0 only

	withIDs bool // table 0
}

var _ Index = (*MemIndex)(nil)

// NewMemIndex returns an empty in-memory index with layout l (the default
// layout when l is the zero Layout).
func NewMemIndex(l Layout) *MemIndex {
	if !l.valid() {
		l = DefaultLayout()
	}
	x := &MemIndex{layout: l, tabs: make([]memTable, l.Tables())}
	x.tabs[0].withIDs = true
	for t := range x.tabs {
		x.tabs[t].rebuildDir(l.PrefixBits(t))
	}
	return x
}

// Layout returns the index's layout.
func (x *MemIndex) Layout() Layout { return x.layout }

// Seen implements Index.
func (x *MemIndex) Seen(ctx context.Context, id uint64, fp Fingerprint) (Match, bool, error) {
	if err := ctx.Err(); err != nil {
		return Match{}, false, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return Match{}, false, ErrClosed
	}
	if ms := x.near(fp, x.layout.K(), nil); len(ms) > 0 {
		return best(ms), true, nil
	}
	x.insert(id, fp)
	return Match{}, false, nil
}

// Near implements Index.
func (x *MemIndex) Near(ctx context.Context, fp Fingerprint, k int) ([]Match, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkK(x.layout, k); err != nil {
		return nil, err
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return nil, ErrClosed
	}
	ms := x.near(fp, k, nil)
	sortMatches(ms)
	return ms, nil
}

// Add implements Index.
func (x *MemIndex) Add(ctx context.Context, id uint64, fp Fingerprint) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return ErrClosed
	}
	if len(x.near(fp, 0, nil)) == 0 {
		x.insert(id, fp)
	}
	return nil
}

// AddBatch records many fingerprints at once, like Add for each pair in
// order, at the cost of one sort and merge per table instead of one insert
// per fingerprint. It is the way to load millions.
func (x *MemIndex) AddBatch(ctx context.Context, ids []uint64, fps []Fingerprint) error {
	if len(ids) != len(fps) {
		return fmt.Errorf("contentseen: add batch: %d ids for %d fingerprints", len(ids), len(fps))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return ErrClosed
	}
	ids, fps = dedupBatch(ids, fps, func(fp Fingerprint) bool { return len(x.near(fp, 0, nil)) > 0 })
	pairs := make([]kv, len(fps))
	for t := range x.tabs {
		for i, fp := range fps {
			pairs[i] = kv{x.layout.Permute(t, fp), ids[i]}
		}
		sortKV(pairs)
		tab := &x.tabs[t]
		tab.mergeDelta()
		tab.merge(pairs)
		tab.rebuildDir(x.layout.PrefixBits(t))
	}
	x.n += len(fps)
	return nil
}

// Len implements Index.
func (x *MemIndex) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return 0
	}
	return x.n
}

// Close implements Index; it drops the tables.
func (x *MemIndex) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return ErrClosed
	}
	x.closed, x.tabs, x.n = true, nil, 0
	return nil
}

// near appends to ms every stored fingerprint within k of fp, each once.
// The caller holds x.mu.
//
// It works in phases across tables rather than table by table, so that the
// cache misses of the tables (directory entry, then first key) are
// independent loads the CPU overlaps instead of a chain of them. A layout
// whose ProbeRadius(k) is above 0 reads several prefixes per table
// (nearProbes).
//
// Tried and measured slower at 10M (4x16, k=3, median of the half of the
// queries with matches / without): scanning the tables' ranges a cache
// line of each in turn (p50 of the mix 3.3 to 3.8 µs against 2.6); a
// 4-byte filter array per table of the 32 bits after the prefix, read
// before the keys (5.6 / 3.1 µs against 3.9 / 2.5: a match then costs a
// second miss in the keys, and the directory-exact range loses the early
// loads of its first and last key).
func (x *MemIndex) near(fp Fingerprint, k int, ms []Match) []Match {
	if e := x.layout.ProbeRadius(k); e > 0 {
		return x.nearProbes(fp, k, e, ms)
	}
	var buf [16]probe
	ps := buf[:0]
	for t := range x.tabs {
		tab := &x.tabs[t]
		p := x.layout.Permute(t, fp)
		lo, hi := x.layout.prefixRange(t, p)
		b := lo >> (64 - uint(tab.dirBits)) // a shift by 64 gives 0
		ps = append(ps, probe{t: t, p: p, lo: lo, hi: hi, i: int(tab.dir[b]), j: int(tab.dir[b+1])})
	}
	return x.scanProbes(ps, k, ms)
}

// probe is a prefix range [lo, hi] of a table, at positions [i, j) of its
// base once narrowed, to compare with p, the query's key in that table.
type probe struct {
	p, lo, hi uint64
	i, j      int
	t         int // the table
}

// nearProbes is near for a multi-probe query: in every table, each prefix
// within e bits of the query's own (ProbeRadius), up to 128 probes of all
// tables at once, so that their directory loads, then the loads of their
// runs, overlap (touchRuns). Table 0's probes come first, so that a match
// found there takes its id from there. The caller holds x.mu.
func (x *MemIndex) nearProbes(fp Fingerprint, k, e int, ms []Match) []Match {
	var buf [128]probe
	ps := buf[:0]
	for t := range x.tabs {
		tab := &x.tabs[t]
		p := x.layout.Permute(t, fp)
		pre := x.layout.PrefixBits(t)
		for _, m := range probeMasks(pre, min(e, pre)) {
			if len(ps) == len(buf) {
				ms = x.scanProbes(ps, k, ms)
				ps = buf[:0]
			}
			lo, hi := x.layout.prefixRange(t, p^m)
			b := lo >> (64 - uint(tab.dirBits)) // a shift by 64 gives 0
			ps = append(ps, probe{t: t, p: p, lo: lo, hi: hi, i: int(tab.dir[b]), j: int(tab.dir[b+1])})
		}
	}
	return x.scanProbes(ps, k, ms)
}

// scanProbes appends the matches within k in the probed ranges ps, in
// order. The caller holds x.mu.
func (x *MemIndex) scanProbes(ps []probe, k int, ms []Match) []Match {
	for n := range ps {
		pr := &ps[n]
		pr.i, pr.j = x.tabs[pr.t].narrow(pr.i, pr.j, pr.lo, pr.hi)
	}
	touchRuns(x.tabs, ps)
	for _, pr := range ps {
		tab := &x.tabs[pr.t]
		keys := tab.keys[pr.i:pr.j]
		for n := nextWithin(keys, 0, pr.p, k); n < len(keys); n = nextWithin(keys, n+1, pr.p, k) {
			ms = x.addMatch(ms, pr.t, keys[n], bits.OnesCount64(keys[n]^pr.p), tab.ids, pr.i+n)
		}
		for n := lowerBound(tab.dkeys, pr.lo); n < len(tab.dkeys) && tab.dkeys[n] <= pr.hi; n++ {
			if d := bits.OnesCount64(tab.dkeys[n] ^ pr.p); d <= k {
				ms = x.addMatch(ms, pr.t, tab.dkeys[n], d, tab.dids, n)
			}
		}
	}
	return ms
}

// nextWithin returns the first index at or after i of a key within k bits
// of p, or len(keys). Four keys per step with one branch on the nearest of
// them: almost no key is a match, and the loop is what a query spends its
// compares in (10,000 keys at k=7 on 4x16 at 10M).
func nextWithin(keys []uint64, i int, p uint64, k int) int {
	for ; i+4 <= len(keys); i += 4 {
		s := keys[i : i+4 : i+4]
		d := min(bits.OnesCount64(s[0]^p), bits.OnesCount64(s[1]^p),
			bits.OnesCount64(s[2]^p), bits.OnesCount64(s[3]^p))
		if d <= k {
			break
		}
	}
	for ; i < len(keys); i++ {
		if bits.OnesCount64(keys[i]^p) <= k {
			return i
		}
	}
	return len(keys)
}

// touchRuns loads one key per cache line of every probe's run before any
// is compared. The loads are independent, so the CPU has many lines in
// flight at once; the scan that follows then reads them from the cache
// instead of waiting for the hardware prefetcher to find each run (a run
// is 152 keys, 19 lines, at 10M on a 16-bit prefix).
func touchRuns(tabs []memTable, ps []probe) {
	var acc uint64
	for _, pr := range ps {
		keys := tabs[pr.t].keys
		for i := pr.i; i < pr.j; i += 8 {
			acc += keys[i]
		}
	}
	sink(acc)
}

// sink keeps the loads of touchRuns: a value passed to a call that is not
// inlined cannot be dropped.
//
//go:noinline
func sink(uint64) {}

// addMatch appends the match of table t's entry c (at distance d) unless
// an earlier table found it; ids[i] is its id in table 0, and other tables
// take it from there. The caller holds x.mu.
func (x *MemIndex) addMatch(ms []Match, t int, c uint64, d int, ids []uint64, i int) []Match {
	f := x.layout.Unpermute(t, c)
	if hasFingerprint(ms, f) {
		return ms
	}
	var id uint64
	if t == 0 {
		id = ids[i]
	} else {
		id = x.idOf(f)
	}
	return append(ms, Match{ID: id, Fingerprint: f, Distance: d})
}

// idOf returns the id of a stored fingerprint, from table 0's base or
// delta. The caller holds x.mu.
func (x *MemIndex) idOf(fp Fingerprint) uint64 {
	tab := &x.tabs[0]
	p := x.layout.Permute(0, fp)
	// Through the directory: one bucket of about 8 keys (152 at 10M on a
	// 16-bit prefix, where the directory stops growing) instead of a
	// binary search over the whole table, each step a cache miss.
	b := p >> (64 - uint(tab.dirBits)) // a shift by 64 gives 0
	lo, hi := int(tab.dir[b]), int(tab.dir[b+1])
	if i := lo + lowerBound(tab.keys[lo:hi], p); i < hi && tab.keys[i] == p {
		return tab.ids[i]
	}
	if i := lowerBound(tab.dkeys, p); i < len(tab.dkeys) && tab.dkeys[i] == p {
		return tab.dids[i]
	}
	panic(fmt.Sprintf("contentseen: MemIndex holds %v in a table but not in table 0", fp))
}

// insert records a fingerprint known to be absent. The caller holds x.mu.
func (x *MemIndex) insert(id uint64, fp Fingerprint) {
	for t := range x.tabs {
		tab := &x.tabs[t]
		key := x.layout.Permute(t, fp)
		n := lowerBound(tab.dkeys, key)
		tab.dkeys = slices.Insert(tab.dkeys, n, key)
		if tab.withIDs {
			tab.dids = slices.Insert(tab.dids, n, id)
		}
		// Inserting into the delta moves O(len(delta)); merging moves O(N)
		// once per len(delta) inserts. sqrt(N) balances the two.
		if len(tab.dkeys) > max(256, isqrt(len(tab.keys))) {
			tab.mergeDelta()
			tab.rebuildDir(x.layout.PrefixBits(t))
		}
	}
	x.n++
}

// narrow returns the part of the directory bucket [i, j) with keys in
// [lo, hi]: the whole bucket when the prefix is no longer than the
// directory's bits, else a short binary search.
func (tab *memTable) narrow(i, j int, lo, hi uint64) (int, int) {
	if tab.exact || i == j || tab.keys[i] >= lo && tab.keys[j-1] <= hi {
		return i, j
	}
	s := tab.keys[i:j]
	return i + lowerBound(s, lo), i + upperBound(s, hi)
}

// mergeDelta moves the delta into the base. The caller rebuilds dir.
func (tab *memTable) mergeDelta() {
	if len(tab.dkeys) == 0 {
		return
	}
	pairs := make([]kv, len(tab.dkeys))
	for i := range pairs {
		pairs[i].key = tab.dkeys[i]
		if tab.withIDs {
			pairs[i].id = tab.dids[i]
		}
	}
	tab.merge(pairs)
	tab.dkeys, tab.dids = tab.dkeys[:0], tab.dids[:0]
}

// merge adds sorted pairs to the base in place, from the back, so that the
// base only ever grows by append (ids only in table 0). The caller
// rebuilds dir.
func (tab *memTable) merge(pairs []kv) {
	n, m := len(tab.keys), len(pairs)
	tab.keys = growHuge(tab.keys, m)[:n+m]
	if !tab.withIDs {
		i, j := n-1, m-1
		for w := n + m - 1; j >= 0; w-- {
			if i >= 0 && tab.keys[i] > pairs[j].key {
				tab.keys[w] = tab.keys[i]
				i--
			} else {
				tab.keys[w] = pairs[j].key
				j--
			}
		}
		return
	}
	tab.ids = growHuge(tab.ids, m)[:n+m]
	i, j := n-1, m-1
	for w := n + m - 1; j >= 0; w-- {
		if i >= 0 && tab.keys[i] > pairs[j].key {
			tab.keys[w], tab.ids[w] = tab.keys[i], tab.ids[i]
			i--
		} else {
			tab.keys[w], tab.ids[w] = pairs[j].key, pairs[j].id
			j--
		}
	}
}

// rebuildDir recomputes the prefix directory: about 8 keys per entry, never
// more bits than the table's prefix (the range is then exact), at most 2^22
// entries (16 MiB).
func (tab *memTable) rebuildDir(prefix int) {
	db := min(prefix, max(0, bits.Len(uint(len(tab.keys)))-3), 22)
	size := 1<<uint(db) + 1
	if cap(tab.dir) >= size {
		tab.dir = tab.dir[:size]
	} else {
		tab.dir = make([]uint32, size)
	}
	tab.dirBits, tab.exact = db, db == prefix
	i := 0
	for b := range size - 1 {
		for i < len(tab.keys) && tab.keys[i]>>(64-uint(db)) < uint64(b) {
			i++
		}
		tab.dir[b] = uint32(i)
	}
	tab.dir[size-1] = uint32(len(tab.keys))
}

// growHuge returns s with room for m more elements, like slices.Grow, but
// a new array is given to adviseHuge before s is copied into it: 15 to 20%
// off the p50 of a query at 10M (4x16, k=3 and k=7; BenchmarkIndexNear,
// BenchmarkIndexNearWide, 2 interleaved runs at load 11 to 17).
func growHuge(s []uint64, m int) []uint64 {
	if cap(s)-len(s) >= m {
		return s
	}
	t := make([]uint64, 0, max(len(s)+m, cap(s)+cap(s)/4))
	if !noHugePages.Load() {
		if err := adviseHuge(t[:cap(t)]); err != nil {
			noHugePages.Store(true) // the kernel says no: stop asking
		}
	}
	return append(t, s...)
}

// noHugePages is set once adviseHuge fails: the arrays stay on the
// kernel's default pages, which work the same.
var noHugePages atomic.Bool

// kv is a permuted key and its id, for sorting and merging.
type kv struct{ key, id uint64 }

func sortKV(pairs []kv) {
	slices.SortFunc(pairs, func(a, b kv) int { return cmp.Compare(a.key, b.key) })
}

// dedupBatch drops fingerprints that are stored (per exists) or repeated in
// the batch, keeping the first id of each, as a sequence of Adds would.
func dedupBatch(ids []uint64, fps []Fingerprint, exists func(Fingerprint) bool) ([]uint64, []Fingerprint) {
	type entry struct {
		fp  Fingerprint
		pos int
	}
	es := make([]entry, len(fps))
	for i, fp := range fps {
		es[i] = entry{fp, i}
	}
	slices.SortFunc(es, func(a, b entry) int {
		if c := cmp.Compare(a.fp, b.fp); c != 0 {
			return c
		}
		return cmp.Compare(a.pos, b.pos)
	})
	outIDs := make([]uint64, 0, len(fps))
	outFPs := make([]Fingerprint, 0, len(fps))
	for i, e := range es {
		if i > 0 && es[i-1].fp == e.fp || exists(e.fp) {
			continue
		}
		outIDs = append(outIDs, ids[e.pos])
		outFPs = append(outFPs, e.fp)
	}
	return outIDs, outFPs
}

// lowerBound returns the first index i with s[i] >= v.
func lowerBound(s []uint64, v uint64) int {
	i, _ := slices.BinarySearch(s, v)
	return i
}

// upperBound returns the first index i with s[i] > v.
func upperBound(s []uint64, v uint64) int {
	if v == ^uint64(0) {
		return len(s)
	}
	return lowerBound(s, v+1)
}

func isqrt(n int) int { return int(math.Sqrt(float64(n))) }

// newSortedMemIndex returns a MemIndex of tables whose keys are already
// sorted and distinct (keys[t], table t's), with ids parallel to keys[0]:
// a BoltIndex's blocks decoded in order need no sort.
func newSortedMemIndex(l Layout, keys [][]uint64, ids []uint64) *MemIndex {
	x := NewMemIndex(l)
	for t := range x.tabs {
		x.tabs[t].keys = keys[t]
		x.tabs[t].rebuildDir(l.PrefixBits(t))
	}
	x.tabs[0].ids = ids
	x.n = len(ids)
	return x
}

// entries returns every (id, fingerprint) x holds, from table 0.
func (x *MemIndex) entries() ([]uint64, []Fingerprint) {
	x.mu.Lock()
	defer x.mu.Unlock()
	tab := &x.tabs[0]
	tab.mergeDelta()
	tab.rebuildDir(x.layout.PrefixBits(0))
	ids := slices.Clone(tab.ids)
	fps := make([]Fingerprint, len(tab.keys))
	for i, k := range tab.keys {
		fps[i] = x.layout.Unpermute(0, k)
	}
	return ids, fps
}

// addBatchAside is AddBatch for a MemIndex whose caller is its only
// writer (a BoltIndex's tables in memory): it merges each table into a
// new array while holding only the read lock, then swaps the new one in
// under the write lock, table 0 first (a match found in a later table
// takes its id from table 0), so that queries wait for a swap, not for a
// merge of millions of keys (about 0.8 s at 10M under AddBatch's lock).
// For a moment some tables hold the batch and others not: the caller
// keeps the batch visible elsewhere (the delta's frozen part) until it
// returns. It needs room for one table's second array.
func (x *MemIndex) addBatchAside(ctx context.Context, ids []uint64, fps []Fingerprint) error {
	x.mu.RLock()
	if x.closed {
		x.mu.RUnlock()
		return ErrClosed
	}
	ids, fps = dedupBatch(ids, fps, func(fp Fingerprint) bool { return len(x.near(fp, 0, nil)) > 0 })
	x.mu.RUnlock()
	pairs := make([]kv, len(fps))
	for t := range x.tabs {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i, fp := range fps {
			pairs[i] = kv{x.layout.Permute(t, fp), ids[i]}
		}
		sortKV(pairs)
		x.mu.RLock()
		old := x.tabs[t]
		x.mu.RUnlock()
		if len(old.dkeys) > 0 {
			return fmt.Errorf("contentseen: add aside: table %d has a delta", t)
		}
		nt := memTable{withIDs: old.withIDs, keys: growHuge(nil, len(old.keys)+len(pairs))}
		if nt.withIDs {
			nt.ids = growHuge(nil, len(old.keys)+len(pairs))
		}
		nt.keys, nt.ids = append(nt.keys, old.keys...), append(nt.ids, old.ids...)
		nt.merge(pairs)
		nt.rebuildDir(x.layout.PrefixBits(t))
		if x.aside != nil {
			x.aside(t)
		}
		x.mu.Lock()
		x.tabs[t] = nt
		x.mu.Unlock()
	}
	x.mu.Lock()
	x.n += len(fps)
	x.mu.Unlock()
	return nil
}
