package contentseen

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// SharedOptions configure a Shared index.
type SharedOptions struct {
	// Layout of the tables; the zero Layout means DefaultLayout. Every
	// worker of a crawl must use the same one (redisindex refuses others).
	Layout Layout
	// K is the radius of Lookup and Claim, 0..Layout.MaxK(): the crawler's
	// candidate radius. Every worker must use the same.
	K int
	// Lease is how long a pending entry stays live without Confirm
	// (default DefaultLease). It must exceed by far the time between a
	// worker's Claim and its store's commit.
	Lease time.Duration
	// MaxLag is how many claims a token may fall behind before Claim
	// returns ErrStaleToken (default DefaultMaxLag).
	MaxLag int
}

// Defaults of SharedOptions.
const (
	DefaultLease  = 30 * time.Second
	DefaultMaxLag = 4096
)

// WithDefaults returns o with zero fields set to their defaults.
func (o SharedOptions) WithDefaults() SharedOptions {
	if !o.Layout.valid() {
		o.Layout = DefaultLayout()
	}
	if o.Lease == 0 {
		o.Lease = DefaultLease
	}
	if o.MaxLag == 0 {
		o.MaxLag = DefaultMaxLag
	}
	return o
}

// Validate reports options out of range (after WithDefaults).
func (o SharedOptions) Validate() error {
	if o.K < 0 || o.K > o.Layout.MaxK() {
		return fmt.Errorf("contentseen: shared index: k=%d outside 0..%d of layout %s", o.K, o.Layout.MaxK(), o.Layout.Name())
	}
	if o.Lease < time.Millisecond {
		return fmt.Errorf("contentseen: shared index: lease %v shorter than 1ms", o.Lease)
	}
	if o.MaxLag < 1 {
		return fmt.Errorf("contentseen: shared index: max lag %d, want at least 1", o.MaxLag)
	}
	return nil
}

// SharedMem is a Shared index in one process: a MemIndex of the
// fingerprints under a mutex, with the entries in maps. It serves tests,
// a single-process crawl driven through Shared, and as the oracle the Redis
// implementation is checked against.
//
// SharedMem is safe for concurrent use.
type SharedMem struct {
	opts SharedOptions
	now  func() time.Time

	mu       sync.Mutex // guards the fields below
	closed   bool
	fps      *MemIndex                // every fingerprint ever claimed (never removed)
	byFP     map[Fingerprint][]uint64 // fingerprint -> seqs of its entries
	byDigest map[[16]byte][]uint64    // non-zero digest -> seqs
	entries  map[uint64]*Entry        // seq -> entry (Pending, Deadline kept current)
	pending  map[uint64]bool          // seqs of the pending entries
	log      []uint64                 // seqs in claim order, the last MaxLag
	seq      uint64                   // last seq given
}

var _ LookupClaimer = (*SharedMem)(nil)

// NewSharedMem returns an empty SharedMem.
func NewSharedMem(o SharedOptions) (*SharedMem, error) {
	o = o.WithDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return &SharedMem{
		opts: o, now: time.Now,
		fps:      NewMemIndex(o.Layout),
		byFP:     map[Fingerprint][]uint64{},
		byDigest: map[[16]byte][]uint64{},
		entries:  map[uint64]*Entry{},
		pending:  map[uint64]bool{},
	}, nil
}

// Layout implements Shared.
func (x *SharedMem) Layout() Layout { return x.opts.Layout }

// K implements Shared.
func (x *SharedMem) K() int { return x.opts.K }

// Lookup implements Shared.
func (x *SharedMem) Lookup(ctx context.Context, fp Fingerprint, d [16]byte) ([]Entry, Token, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil, 0, ErrClosed
	}
	x.purge(x.now())
	out, err := x.lookupLocked(ctx, fp, d, x.opts.K)
	if err != nil {
		return nil, 0, err
	}
	return out, Token(x.seq), nil
}

// lookupLocked returns the live entries within k of fp or with digest d.
// The caller holds x.mu and purged.
func (x *SharedMem) lookupLocked(ctx context.Context, fp Fingerprint, d [16]byte, k int) ([]Entry, error) {
	var out []Entry
	ms, err := x.fps.Near(ctx, fp, k)
	if err != nil {
		return nil, fmt.Errorf("contentseen: shared lookup: %w", err)
	}
	seen := map[uint64]bool{}
	add := func(seq uint64) {
		if seen[seq] {
			return
		}
		seen[seq] = true
		e := *x.entries[seq]
		e.Distance = Distance(fp, e.Fingerprint)
		out = append(out, e)
	}
	for _, m := range ms {
		for _, seq := range x.byFP[m.Fingerprint] {
			add(seq)
		}
	}
	if d != ([16]byte{}) {
		for _, seq := range x.byDigest[d] {
			add(seq)
		}
	}
	SortEntries(out)
	return out, nil
}

// LookupClaim implements LookupClaimer.
func (x *SharedMem) LookupClaim(ctx context.Context, e Entry, radius int) (LookupClaimed, error) {
	if err := ctx.Err(); err != nil {
		return LookupClaimed{}, err
	}
	if err := checkEntry(e); err != nil {
		return LookupClaimed{}, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return LookupClaimed{}, ErrClosed
	}
	now := x.now()
	x.purge(now)
	cands, err := x.lookupLocked(ctx, e.Fingerprint, e.Digest, min(max(radius, 0), x.opts.K))
	if err != nil {
		return LookupClaimed{}, err
	}
	for _, seq := range x.byFP[e.Fingerprint] {
		if c := x.entries[seq]; c.Pending && c.ID == e.ID && c.URL == e.URL && c.Digest == e.Digest && c.Sketch == e.Sketch {
			// The same call again: its claim, and the candidates before it.
			before := slices.DeleteFunc(cands, func(c Entry) bool { return c.Seq >= seq })
			return LookupClaimed{Candidates: before, Seq: seq, Token: Token(x.seq)}, nil
		}
	}
	for _, c := range cands {
		if e.Digest != ([16]byte{}) && c.Digest == e.Digest {
			return LookupClaimed{Candidates: cands, Token: Token(x.seq)}, nil
		}
	}
	seq, err := x.insertLocked(ctx, e, now)
	if err != nil {
		return LookupClaimed{}, err
	}
	return LookupClaimed{Candidates: cands, Seq: seq, Token: Token(x.seq)}, nil
}

// Entries implements LookupClaimer.
func (x *SharedMem) Entries(ctx context.Context, seqs []uint64) ([]Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil, ErrClosed
	}
	x.purge(x.now())
	var out []Entry
	for _, seq := range slices.Sorted(slices.Values(seqs)) {
		if e, ok := x.entries[seq]; ok && (len(out) == 0 || out[len(out)-1].Seq != seq) {
			c := *e
			c.Distance = 0
			out = append(out, c)
		}
	}
	return out, nil
}

// Claim implements Shared.
func (x *SharedMem) Claim(ctx context.Context, e Entry, tok Token) (Claimed, error) {
	if err := ctx.Err(); err != nil {
		return Claimed{}, err
	}
	if err := checkEntry(e); err != nil {
		return Claimed{}, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return Claimed{}, ErrClosed
	}
	now := x.now()
	x.purge(now)
	if uint64(tok) > x.seq {
		return Claimed{}, fmt.Errorf("contentseen: claim: token %d ahead of the index (%d claims): %w", tok, x.seq, ErrStaleToken)
	}
	lag := x.seq - uint64(tok)
	if lag > uint64(x.opts.MaxLag) {
		return Claimed{}, fmt.Errorf("contentseen: claim: %d claims since the token: %w", lag, ErrStaleToken)
	}
	var conflicts []Entry
	for _, seq := range x.log[uint64(len(x.log))-lag:] {
		c, ok := x.entries[seq]
		if !ok {
			continue
		}
		dist := Distance(e.Fingerprint, c.Fingerprint)
		if dist <= x.opts.K || e.Digest != ([16]byte{}) && e.Digest == c.Digest {
			cc := *c
			cc.Distance = dist
			conflicts = append(conflicts, cc)
		}
	}
	if len(conflicts) > 0 {
		SortEntries(conflicts)
		return Claimed{Conflicts: conflicts, Token: Token(x.seq)}, nil
	}
	seq, err := x.insertLocked(ctx, e, now)
	if err != nil {
		return Claimed{}, err
	}
	return Claimed{Seq: seq, Token: Token(x.seq)}, nil
}

// insertLocked inserts e as a pending entry with the next seq, which it
// returns. The caller holds x.mu.
func (x *SharedMem) insertLocked(ctx context.Context, e Entry, now time.Time) (uint64, error) {
	x.seq++
	ne := e
	ne.Seq, ne.Pending, ne.Deadline, ne.Distance = x.seq, true, now.Add(x.opts.Lease), 0
	x.entries[ne.Seq] = &ne
	x.pending[ne.Seq] = true
	x.byFP[ne.Fingerprint] = append(x.byFP[ne.Fingerprint], ne.Seq)
	if ne.Digest != ([16]byte{}) {
		x.byDigest[ne.Digest] = append(x.byDigest[ne.Digest], ne.Seq)
	}
	if err := x.fps.Add(ctx, ne.Seq, ne.Fingerprint); err != nil {
		return 0, fmt.Errorf("contentseen: claim: %w", err)
	}
	x.log = append(x.log, ne.Seq)
	if len(x.log) > 2*x.opts.MaxLag {
		x.log = append(x.log[:0], x.log[len(x.log)-x.opts.MaxLag:]...)
	}
	return ne.Seq, nil
}

// Confirm implements Shared.
func (x *SharedMem) Confirm(ctx context.Context, seq uint64, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return ErrClosed
	}
	x.purge(x.now())
	e, ok := x.entries[seq]
	if !ok || e.ID != id {
		return fmt.Errorf("contentseen: confirm %d: %w", seq, ErrLeaseLost)
	}
	e.Pending, e.Deadline = false, time.Time{}
	delete(x.pending, seq)
	return nil
}

// Release implements Shared.
func (x *SharedMem) Release(ctx context.Context, seq uint64, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return ErrClosed
	}
	e, ok := x.entries[seq]
	if !ok || e.ID != id {
		return nil
	}
	if !e.Pending {
		return fmt.Errorf("contentseen: release %d: %w", seq, ErrCommitted)
	}
	x.remove(seq)
	return nil
}

// Close implements Shared.
func (x *SharedMem) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return ErrClosed
	}
	x.closed = true
	return x.fps.Close()
}

// purge removes the pending entries whose lease ended at now or before.
// The caller holds x.mu.
func (x *SharedMem) purge(now time.Time) {
	for seq := range x.pending {
		if !now.Before(x.entries[seq].Deadline) {
			x.remove(seq)
		}
	}
}

// remove deletes entry seq. The caller holds x.mu.
func (x *SharedMem) remove(seq uint64) {
	e := x.entries[seq]
	delete(x.entries, seq)
	delete(x.pending, seq)
	x.byFP[e.Fingerprint] = without(x.byFP[e.Fingerprint], seq)
	if len(x.byFP[e.Fingerprint]) == 0 {
		delete(x.byFP, e.Fingerprint)
	}
	if e.Digest != ([16]byte{}) {
		x.byDigest[e.Digest] = without(x.byDigest[e.Digest], seq)
		if len(x.byDigest[e.Digest]) == 0 {
			delete(x.byDigest, e.Digest)
		}
	}
}

func without(s []uint64, v uint64) []uint64 {
	out := s[:0]
	for _, x := range s {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

// checkEntry reports an entry Claim must refuse.
func checkEntry(e Entry) error {
	if n := len(e.ID) + len(e.URL); n > MaxEntryText {
		return fmt.Errorf("contentseen: claim: id and url of %d bytes, more than %d", n, MaxEntryText)
	}
	return nil
}
