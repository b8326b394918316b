package contentseen

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math"
	"os"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// Merging the delta into the compressed blocks. A merge
//
//  1. freezes the delta: in one write transaction, the committed entries
//     (sequence <= S) become the frozen part of the mirror, and new
//     entries go on to a fresh active part;
//  2. merges the frozen entries into table 0, then 1, and so on, in steps
//     of at most mergeStepBlocks rewritten blocks, each its own write
//     transaction, so that Seen calls, which queue for bbolt's single
//     writer, wait for one short step at most, never for the whole merge;
//  3. deletes the delta's entries <= S, a chunk per transaction, and in
//     the last, for each table whose code no longer fits the h values the
//     merge wrote, records a new code version for the next merge.
//
// A crash at any point loses nothing: the delta still holds every frozen
// entry step 3 has not deleted, which step 2 wrote into every table; the
// next open loads the remaining ones into the mirror again, and merging
// entries a step already wrote changes nothing (mergeTable skips them).

// mergeStepBlocks is about the most blocks one merge transaction writes:
// about 256 KiB of dirty blocks, a few milliseconds with its fsync.
const mergeStepBlocks = 64

// releaseSteps is how many merge steps (about 32 MiB of rewritten blocks)
// run between two releases of the file's mapped pages (releaseMapped), so
// that the old blocks' pages and the new do not both stay resident for a
// whole merge.
const releaseSteps = 128

// minDelta is the delta size that starts a merge at any index size; from
// 64 × minDelta stored fingerprints the threshold is 1/64 of them, so
// that a merge, which rewrites about every block, does so once per 1/64
// growth.
const minDelta = 1 << 16

// deltaLimit returns the committed delta size that starts a merge. It
// reads the count without x.mu: kickMerge runs on the committer, which
// Close waits for while holding x.mu.
func (x *BoltIndex) deltaLimit() int {
	if x.minDelta > 0 {
		return x.minDelta
	}
	n := 0
	if err := x.db.View(func(tx *bolt.Tx) error { n = x.LenTx(tx); return nil }); err != nil {
		return minDelta // closed: the merger is stopping anyway
	}
	return max(minDelta, n/64)
}

// kickMerge wakes the merger if the delta is over its limit, or has taken
// dropEvery records since the merger last dropped their pages.
func (x *BoltIndex) kickMerge() {
	if x.mergeKick == nil {
		return
	}
	// It runs after every commit: below the smallest limit, skip reading
	// the index's count.
	n := x.delta.len()
	drop := n >= int(x.nextDrop.Load())
	if !drop && (x.minDelta == 0 && n < minDelta || n < x.deltaLimit()) {
		return
	}
	select {
	case x.mergeKick <- struct{}{}:
	default:
	}
}

// mergeLoop is the merger goroutine of a writable index, started by
// NewBoltIndex and stopped by Close, which waits for it. It merges
// whenever the delta passes its limit; a failed merge is logged, retried
// at the next kick (the delta keeps working meanwhile), and, if no merge
// succeeded since, returned by Close. Between merges it drops the pages of
// every dropEvery new records from memory (dropRecent).
func (x *BoltIndex) mergeLoop(ctx context.Context) {
	defer close(x.mergeDone)
	for {
		select {
		case <-ctx.Done():
			return
		case <-x.mergeKick:
		}
		for ctx.Err() == nil && x.delta.len() >= x.deltaLimit() {
			if err := x.merge(ctx); err != nil {
				if ctx.Err() == nil {
					x.setMergeErr(err)
					slog.Error("contentseen: merge of the delta failed; will retry", "err", err)
				}
				break
			}
			x.setMergeErr(nil)
		}
		// Between merges, drop the pages of the records since the last
		// drop (dropRecent). Under mergeMu, so that a Checkpoint's merge,
		// which resets nextDrop, is wholly before or after.
		x.mergeMu.Lock()
		if n := x.delta.len(); n >= int(x.nextDrop.Load()) {
			x.releaseOrWarn(x.dropRecent(math.MaxUint64))
			x.nextDrop.Store(int64(n + dropEvery))
		}
		x.mergeMu.Unlock()
	}
}

// Checkpoint merges the whole delta into the blocks now and returns when
// it is done (the merger does the same in the background whenever the
// delta passes its limit). Seen and Add go on meanwhile; what they record
// after Checkpoint began may stay in the delta.
func (x *BoltIndex) Checkpoint(ctx context.Context) error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return ErrClosed
	}
	if x.readOnly {
		return fmt.Errorf("contentseen: checkpoint: read-only database")
	}
	// A frozen delta left by an interrupted merge first, then the rest.
	for range 2 {
		if err := x.merge(ctx); err != nil {
			return err
		}
	}
	return nil
}

// merge runs one merge: of the frozen delta if a merge was interrupted,
// else of the committed delta, frozen now.
func (x *BoltIndex) merge(ctx context.Context) error {
	x.mergeMu.Lock()
	defer x.mergeMu.Unlock()
	var frozen *MemIndex
	var frozenSeq uint64
	err := x.db.Update(func(tx *bolt.Tx) error {
		top, err := x.top(tx)
		if err != nil {
			return err
		}
		delta := top.Bucket(deltaBucket)
		d := x.delta
		d.mu.Lock()
		defer d.mu.Unlock()
		d.resolve(tx, delta)
		if d.frozen == nil && d.active.Len() > 0 {
			d.frozen, d.frozenSeq = d.active, delta.Sequence()
			d.active = NewMemIndex(x.layout)
		}
		frozen, frozenSeq = d.frozen, d.frozenSeq
		return nil
	})
	if err != nil || frozen == nil {
		return err
	}
	hists := make([][hSymbols]uint64, x.layout.Tables())
	steps := 0
	var rp replacedPages
	var advice *os.File
	if f := x.openForAdvice(); f != nil {
		defer f.Close()
		advice = f
	}
	x.releaseOrWarn(x.dropRecent(frozenSeq))
	x.nextDrop.Store(dropEvery) // the delta's active part starts again
	// One array of entries and one scratch for all tables and steps: a
	// merge's garbage raises the Go heap's size, which is resident memory.
	var all []entry
	var sc runScratch
	for t := range x.layout.Tables() {
		all = frozenEntries(all, frozen, t)
		es := all
		for len(es) > 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if steps++; steps%releaseSteps == 0 {
				x.releaseOrWarn(x.releaseMapped())
			}
			err := x.db.Update(func(tx *bolt.Tx) error {
				top, err := x.top(tx)
				if err != nil {
					return err
				}
				rp.begin(x.db, tx)
				tables := top.Bucket(tablesBucket)
				// A merge rewrites the blocks in key order, and every
				// block of a page at the next merge: pages split full,
				// not at bbolt's default half, which would leave the
				// tables about half a page bigger per page after a merge.
				tables.FillPercent = 1.0
				n, err := x.mergeTable(tables, t, es, mergeStepBlocks, &hists[t], &rp, &sc)
				es = es[n:]
				return err
			})
			if err != nil {
				return fmt.Errorf("contentseen: merge into table %d: %w", t, err)
			}
			x.releaseOrWarn(x.dropPages(advice, rp.runs()))
			if x.afterMergeStep != nil {
				x.afterMergeStep(t)
			}
		}
	}
	finalTx, err := x.trimDelta(advice, frozenSeq, hists)
	if err != nil {
		return fmt.Errorf("contentseen: finish merge: %w", err)
	}
	// The blocks hold the frozen part now: so must the tables' mirror
	// before the delta's lets it go.
	if err := x.addToMirror(ctx, frozen); err != nil {
		return err
	}
	d := x.delta
	d.mu.Lock()
	d.mergedTx, d.frozen = finalTx, nil
	d.mu.Unlock()
	x.merges.Add(1)
	x.releaseOrWarn(x.releaseMapped())
	return nil
}

// trimDelta deletes the delta's entries <= frozenSeq, trimChunk per write
// transaction, and in the last records, for each table whose code no
// longer fits the h values the merge wrote (hists), a new code version. It
// returns the last transaction's id.
//
// Chunks, not one transaction: bbolt reads every leaf page a transaction
// deletes from into nodes on the Go heap, and the delta's keys with them.
// One transaction for a merge of 156,000 entries (10M stored) held 13 MB
// of them, which with the Go heap's headroom was the largest part of the
// merge's resident peak. The chunks are safe: every table step committed
// before the first, and a reader whose snapshot lacks a trimmed entry has
// all the steps' blocks (see deltaView).
func (x *BoltIndex) trimDelta(advice *os.File, frozenSeq uint64, hists [][hSymbols]uint64) (int, error) {
	keys := make([][]byte, 0, trimChunk)
	var rp replacedPages
	for {
		var finalTx int
		done := false
		err := x.db.Update(func(tx *bolt.Tx) error {
			top, err := x.top(tx)
			if err != nil {
				return err
			}
			// Collect, then delete: a bbolt cursor's Next after Delete
			// may skip a key.
			delta := top.Bucket(deltaBucket)
			keys = keys[:0]
			rp.begin(x.db, tx)
			c := delta.Cursor()
			for k, v := c.First(); len(k) == 8 && binary.BigEndian.Uint64(k) <= frozenSeq && len(keys) < trimChunk; k, v = c.Next() {
				keys = append(keys, k)
				rp.note(v) // the pages the trim frees
			}
			for _, k := range keys {
				if err := delta.Delete(k); err != nil {
					return fmt.Errorf("contentseen: trim delta: %w", err)
				}
			}
			if len(keys) == trimChunk {
				return nil // more to trim
			}
			for t := range x.layout.Tables() {
				if _, cur := x.codes.latest(t); cur != nil {
					if nc, ok := cur.worthReplacing(&hists[t]); ok {
						if err := x.codes.add(tx, top.Bucket(codesBucket), t, nc); err != nil {
							return err
						}
					}
				}
			}
			finalTx, done = tx.ID(), true
			return nil
		})
		if err != nil {
			return finalTx, err
		}
		// The trim read the pages back from the file (dropRecent had
		// dropped them): drop them again, free now.
		x.releaseOrWarn(x.dropPages(advice, rp.runs()))
		if done {
			return finalTx, nil
		}
	}
}

// trimChunk is how many delta entries one transaction of trimDelta
// deletes: about 40 leaf pages.
const trimChunk = 4096

// releaseOrWarn logs the error of a call that only drops pages from this
// process's mapping or the page cache: it loses nothing, so it does not
// fail the merge (which would be retried for no reason), but it is not
// dropped silently either.
func (x *BoltIndex) releaseOrWarn(err error) {
	if err != nil {
		slog.Warn("contentseen: merge: pages not dropped from memory", "err", err)
	}
}

// frozenEntries returns table t's entries of the frozen mirror, sorted
// (ids only for table 0), in dst's array if it is big enough. frozen takes
// no more inserts.
func frozenEntries(dst []entry, frozen *MemIndex, t int) []entry {
	frozen.mu.Lock()
	defer frozen.mu.Unlock()
	tab := &frozen.tabs[t]
	if len(tab.dkeys) > 0 {
		tab.mergeDelta()
		tab.rebuildDir(frozen.layout.PrefixBits(t))
	}
	es := slices.Grow(dst[:0], len(tab.keys))[:len(tab.keys)]
	for i, k := range tab.keys {
		es[i] = entry{p: k}
		if t == 0 {
			es[i].id = tab.ids[i]
		}
	}
	return es
}

func (x *BoltIndex) setMergeErr(err error) {
	x.mergeErrMu.Lock()
	x.mergeErr = err
	x.mergeErrMu.Unlock()
}
