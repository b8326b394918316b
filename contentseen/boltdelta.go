package contentseen

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// The delta: BoltIndex records a new fingerprint by appending (sequence
// number -> fingerprint, id) to one small bucket instead of rewriting a
// compressed block in every table. A group of Seen calls then dirties a
// few pages at the end of the delta (and of fps) rather than one leaf per
// table per call, which is what bounded durable throughput in format 2.
// Queries read the delta from a mirror in memory, per table a sorted
// array (MemIndex); merges (boltmerge.go) move it into the blocks.
//
// The mirror must match what each transaction sees:
//   - committed entries are in active (or frozen, while a merge moves
//     them into the blocks);
//   - the entries a write transaction recorded are in pend until it ends:
//     only that transaction sees them. bbolt runs commit handlers after it
//     releases the writer lock, so the next transaction to look resolves
//     pend itself: if its snapshot holds pend's first sequence number the
//     writer committed and pend joins active, else (for a writer, which
//     starts only after the last one ended) it rolled back and pend is
//     dropped.
//   - a read transaction that began before the last merge ended may lack
//     in its blocks what that merge (or an earlier one it overlapped)
//     moved out of the mirror; its own snapshot of the delta bucket still
//     holds those entries or its blocks do (a merge deletes them from the
//     bucket only after all its steps into the blocks committed), so such
//     a reader scans that bucket instead of the mirror: rare (merges are
//     minutes apart, reads short) and exact.
//
// Extra mirror entries are harmless for readers of older snapshots: the
// index only grows, and a match is deduplicated by fingerprint.

var deltaBucket = []byte("delta")

// deltaState is a BoltIndex's mirror of its delta bucket.
type deltaState struct {
	layout Layout

	mu        sync.Mutex
	active    *MemIndex // committed, not frozen
	frozen    *MemIndex // committed with sequence <= frozenSeq, being merged; nil if none
	frozenSeq uint64
	mergedTx  int // the id of the last merge's last transaction
	pend      *pending

	onCommit func() // after a writer's entries joined active; set before use
}

// pending is what one write transaction recorded.
type pending struct {
	tx       *bolt.Tx
	firstSeq uint64
	idx      *MemIndex
	ids      []uint64
	fps      []Fingerprint
}

func newDeltaState(l Layout) *deltaState {
	return &deltaState{layout: l, active: NewMemIndex(l)}
}

// load fills active from the delta bucket (when an index is opened).
func (d *deltaState) load(ctx context.Context, delta *bolt.Bucket) error {
	var ids []uint64
	var fps []Fingerprint
	err := delta.ForEach(func(k, v []byte) error {
		if len(k) != 8 || len(v) != 16 {
			return fmt.Errorf("corrupt delta entry %x", k)
		}
		fps = append(fps, Fingerprint(binary.BigEndian.Uint64(v)))
		ids = append(ids, binary.BigEndian.Uint64(v[8:]))
		return nil
	})
	if err != nil {
		return fmt.Errorf("contentseen: read delta: %w", err)
	}
	return d.active.AddBatch(ctx, ids, fps)
}

// deltaView is the mirror parts one transaction sees (an array, so that a
// query does not allocate for it), or scan: read the transaction's own
// snapshot of the delta bucket instead.
type deltaView struct {
	parts [4]*MemIndex
	n     int
	scan  bool
}

func (v *deltaView) add(m *MemIndex) { v.parts[v.n] = m; v.n++ }

// view returns the mirror parts transaction tx sees, resolving a finished
// writer's pending entries first.
func (d *deltaState) view(tx *bolt.Tx, delta *bolt.Bucket) (ms deltaView) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.resolve(tx, delta)
	if !tx.Writable() && tx.ID() < d.mergedTx {
		return deltaView{scan: true}
	}
	ms.add(d.active)
	if d.frozen != nil {
		ms.add(d.frozen)
	}
	if d.pend != nil && d.pend.tx == tx {
		ms.add(d.pend.idx)
	}
	return ms
}

// resolve settles pend when tx is not its writer. The caller holds d.mu.
func (d *deltaState) resolve(tx *bolt.Tx, delta *bolt.Bucket) {
	p := d.pend
	if p == nil || p.tx == tx {
		return
	}
	switch {
	case delta.Get(be64(p.firstSeq)) != nil:
		d.promote(p)
	case tx.Writable():
		d.pend = nil // rolled back
	}
	// Else a read that began before the writer committed: not visible.
}

// promote moves p into active. The caller holds d.mu.
func (d *deltaState) promote(p *pending) {
	if d.pend != p {
		return
	}
	d.pend = nil
	if len(p.ids) < promoteBatch {
		// The crawler commits a page or a few per transaction: insert
		// them (O(sqrt(N)) each) rather than merge the whole mirror.
		a := d.active
		a.mu.Lock()
		for i, fp := range p.fps {
			a.insert(p.ids[i], fp) // absent: the writer checked
		}
		a.mu.Unlock()
		return
	}
	// AddBatch fails only on a cancelled context or a closed index.
	if err := d.active.AddBatch(context.Background(), p.ids, p.fps); err != nil {
		panic(fmt.Sprintf("contentseen: delta mirror: %v", err))
	}
}

// promoteBatch is the size from which a writer's entries join the mirror
// by one sorted merge instead of one insert each.
const promoteBatch = 256

// record appends (id, fp), known to be absent, to the delta in tx.
func (d *deltaState) record(tx *bolt.Tx, delta *bolt.Bucket, id uint64, fp Fingerprint) error {
	seq, err := delta.NextSequence()
	if err != nil {
		return fmt.Errorf("contentseen: delta sequence: %w", err)
	}
	v := make([]byte, 16)
	binary.BigEndian.PutUint64(v, uint64(fp))
	binary.BigEndian.PutUint64(v[8:], id)
	if err := delta.Put(be64(seq), v); err != nil {
		return fmt.Errorf("contentseen: record %v: %w", fp, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.resolve(tx, delta)
	p := d.pend
	if p == nil {
		p = &pending{tx: tx, firstSeq: seq, idx: NewMemIndex(d.layout)}
		d.pend = p
		tx.OnCommit(func() {
			d.mu.Lock()
			d.promote(p)
			d.mu.Unlock()
			if d.onCommit != nil {
				d.onCommit()
			}
		})
	}
	p.idx.mu.Lock()
	p.idx.insert(id, fp)
	p.idx.mu.Unlock()
	p.ids, p.fps = append(p.ids, id), append(p.fps, fp)
	return nil
}

// len returns the number of committed entries not being merged.
func (d *deltaState) len() int {
	d.mu.Lock()
	a := d.active
	d.mu.Unlock()
	return a.Len()
}

// memNear appends m's matches within k of fp to ms.
func memNear(m *MemIndex, fp Fingerprint, k int, ms []Match) []Match {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.near(fp, k, ms)
}

// scanNear appends to ms the entries of the delta bucket (in the caller's
// snapshot) within k of fp.
func scanNear(delta *bolt.Bucket, fp Fingerprint, k int, ms []Match) ([]Match, error) {
	err := delta.ForEach(func(key, v []byte) error {
		if len(v) != 16 {
			return fmt.Errorf("contentseen: corrupt delta entry %x", key)
		}
		f := Fingerprint(binary.BigEndian.Uint64(v))
		if d := Distance(f, fp); d <= k {
			ms = addMatch(ms, Match{ID: binary.BigEndian.Uint64(v[8:]), Fingerprint: f, Distance: d})
		}
		return nil
	})
	return ms, err
}
