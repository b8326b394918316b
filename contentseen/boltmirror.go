package contentseen

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
)

// The tables' mirror. With BoltOptions.MemoryLimit set, a BoltIndex holds
// its blocks' entries decoded in memory as well (a MemIndex: 8 bytes per
// fingerprint per table and 8 for its id), and a query reads that instead
// of the blocks: a 4x16 k=7 query at 10M reads 68 prefix ranges, and from
// the blocks each is a descent of bbolt's B-tree and the decoding of some
// 150 entries (about 170 to 190 µs warm), from memory a directory entry and
// a scan of 150 keys (23 to 26 µs in all). The blocks stay the durable copy; the
// mirror is rebuilt from them when the index opens.
//
// The mirror must answer for every transaction what the blocks would:
//   - it is built from the blocks at open, and after AddBatch, inside a
//     read transaction, before any query reads it;
//   - only merges and AddBatch write the blocks. A merge moves the frozen
//     delta into the blocks step by step while the delta's mirror still
//     holds it (deltaView), then adds it to this mirror, and only then
//     drops the frozen part: at every moment blocks ⊆ this mirror ∪ the
//     delta's view, provided a query takes the view before it reads this
//     mirror (near), so that a view without the frozen part comes after
//     the add. AddBatch drops this mirror before its first write and
//     rebuilds it after its last;
//   - a read transaction older than a merge may see fewer entries than
//     the mirror holds; the index only grows and matches are
//     deduplicated by fingerprint, so extra entries are harmless (the
//     delta's mirror relies on the same).
//
// Past MemoryLimit the mirror is not built, or dropped when a merge would
// take it over, and queries read the blocks.

// errMirrorTooBig says the tables would take more than MemoryLimit.
var errMirrorTooBig = errors.New("contentseen: the tables take more memory than the limit")

// tablesMirror is a BoltIndex's tables held in memory.
type tablesMirror struct {
	limit int64 // bytes; 0: never held

	mu      sync.Mutex // serialises building, adding and dropping
	cur     atomic.Pointer[MemIndex]
	batches int // AddBatch calls running (guarded by mu): a mirror built meanwhile would miss what they write next
}

// mirrorBytes returns the memory a mirror of n fingerprints takes with
// layout l at its peak: MemIndex's 8 bytes per table and 8 for the id,
// and while a merge adds to it a second copy of one table (table 0's,
// with its ids, is the largest: addBatchAside).
func mirrorBytes(l Layout, n int) int64 {
	return int64(n) * int64(8*l.Tables()+8+16)
}

// mirror returns the tables' mirror, nil when the blocks must be read.
func (x *BoltIndex) mirror() *MemIndex { return x.mem.cur.Load() }

// buildMirror decodes every table's blocks into a new mirror, unless the
// limit forbids it. The caller holds mergeMu or otherwise keeps merges
// and AddBatch from writing the blocks meanwhile.
func (x *BoltIndex) buildMirror(ctx context.Context) error {
	m := &x.mem
	if m.limit <= 0 || x.readOnly {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cur.Store(nil)
	var built *MemIndex
	if m.batches > 0 {
		return nil // the last AddBatch to end builds it
	}
	err := x.db.View(func(tx *bolt.Tx) error {
		top, err := x.top(tx)
		if err != nil {
			return err
		}
		if mirrorBytes(x.layout, x.LenTx(tx)) > m.limit {
			return errMirrorTooBig
		}
		built, err = x.decodeTables(ctx, top.Bucket(tablesBucket))
		return err
	})
	if errors.Is(err, errMirrorTooBig) {
		slog.Info("contentseen: the index's tables are read from disk: holding them in memory would pass the limit",
			"limit_bytes", m.limit)
		return nil
	}
	if err != nil {
		return fmt.Errorf("contentseen: hold the tables in memory: %w", err)
	}
	m.cur.Store(built)
	return nil
}

// decodeTables returns a MemIndex of every entry of the blocks.
func (x *BoltIndex) decodeTables(ctx context.Context, tables *bolt.Bucket) (*MemIndex, error) {
	keys := make([][]uint64, x.layout.Tables())
	var ids []uint64
	c := tables.Cursor()
	for t := range keys {
		// First the entries' count, from the blocks' headers, so that
		// the arrays are allocated once (and on huge pages).
		n := 0
		for k, v := c.Seek([]byte{byte(t)}); len(k) == 9 && int(k[0]) == t; k, v = c.Next() {
			if len(v) < blockHeader {
				return nil, fmt.Errorf("table %d block %x: corrupt block of %d bytes", t, k[1:], len(v))
			}
			n += int(binary.BigEndian.Uint16(v[1:]))
		}
		if t > 0 && n != len(keys[0]) {
			// A merge was interrupted (a crash, or Close while it ran):
			// it had moved the frozen delta into the tables before t, not
			// yet (wholly) into this one. The delta still holds those
			// entries, but the mirror's tables must hold the same
			// fingerprints: a merge adds to the mirror only what its table
			// 0 lacks. Table 0, merged first, holds every entry of the
			// others.
			if n > len(keys[0]) {
				return nil, fmt.Errorf("table %d holds %d entries, table 0 %d", t, n, len(keys[0]))
			}
			keys[t] = x.permutedFrom(t, keys[0])
			continue
		}
		ks := growHuge(nil, n)
		if t == 0 {
			ids = growHuge(nil, n)
		}
		for k, v := c.Seek([]byte{byte(t)}); len(k) == 9 && int(k[0]) == t; k, v = c.Next() {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			b, err := x.parseBlock(t, k, v)
			if err != nil {
				return nil, fmt.Errorf("table %d block %x: %w", t, k[1:], err)
			}
			if len(ks) > 0 && b.first <= ks[len(ks)-1] {
				return nil, fmt.Errorf("table %d block %x: entries out of order", t, k[1:])
			}
			it := b.iter()
			for i := range b.n {
				ks = append(ks, it.next())
				if t == 0 {
					ids = append(ids, b.id(i))
				}
			}
		}
		keys[t] = ks
	}
	return newSortedMemIndex(x.layout, keys, ids), nil
}

// permutedFrom returns table t's sorted keys of the fingerprints whose
// table-0 keys are keys0.
func (x *BoltIndex) permutedFrom(t int, keys0 []uint64) []uint64 {
	ks := growHuge(nil, len(keys0))[:len(keys0)]
	for i, k := range keys0 {
		ks[i] = x.layout.Permute(t, x.layout.Unpermute(0, k))
	}
	slices.Sort(ks)
	return ks
}

// addToMirror adds a merged delta part to the mirror, or drops the mirror
// when that would pass the limit. The caller holds mergeMu.
func (x *BoltIndex) addToMirror(ctx context.Context, part *MemIndex) error {
	m := &x.mem
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := m.cur.Load()
	if cur == nil {
		return nil
	}
	if mirrorBytes(x.layout, cur.Len()+part.Len()) > m.limit {
		m.cur.Store(nil)
		slog.Info("contentseen: the index's tables are now read from disk: holding them in memory would pass the limit",
			"limit_bytes", m.limit, "fingerprints", cur.Len()+part.Len())
		return nil
	}
	ids, fps := part.entries()
	if err := cur.addBatchAside(ctx, ids, fps); err != nil {
		m.cur.Store(nil) // incomplete: the blocks answer until the next open
		return fmt.Errorf("contentseen: add the merged delta to the tables in memory: %w", err)
	}
	return nil
}

// dropMirror makes queries read the blocks (Close).
func (x *BoltIndex) dropMirror() {
	x.mem.mu.Lock()
	x.mem.cur.Store(nil)
	x.mem.mu.Unlock()
}

// beginBatch drops the mirror before AddBatch writes the blocks; endBatch
// rebuilds it after the last running AddBatch (whether it failed or not:
// what it committed is in the blocks).
func (x *BoltIndex) beginBatch() {
	x.mem.mu.Lock()
	x.mem.batches++
	x.mem.cur.Store(nil)
	x.mem.mu.Unlock()
}

func (x *BoltIndex) endBatch(ctx context.Context) error {
	x.mem.mu.Lock()
	x.mem.batches--
	x.mem.mu.Unlock()
	if x.mem.limit <= 0 {
		return nil // no tables in memory: nothing to wait for a merge to rebuild
	}
	x.mergeMu.Lock()
	defer x.mergeMu.Unlock()
	return x.buildMirror(ctx)
}

// HoldsTablesInMemory reports whether queries read the tables from memory
// (BoltOptions.MemoryLimit) rather than from the blocks.
func (x *BoltIndex) HoldsTablesInMemory() bool { return x.mirror() != nil }
