package contentseen

import (
	"fmt"
	"sync"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
)

// codesBucket holds every table's code versions: key table number (1
// byte) + version (1 byte), value the 256 code lengths (one per symbol).
// Version 0, the flat eight-bit code, is implicit.
var codesBucket = []byte("codes")

// codeSet is every table's code versions, indexed [table][version]; a nil
// entry is a version number that was never committed. It is replaced, never
// changed, so readers use it without a lock.
type codeSet [][]*hcode

// codeRegistry is a BoltIndex's code versions in memory.
type codeRegistry struct {
	set  atomic.Pointer[codeSet]
	mu   sync.Mutex // serialises add and register
	next []int      // per table, the next version number to hand out
}

func (r *codeRegistry) init(tables int) {
	s := make(codeSet, tables)
	r.next = make([]int, tables)
	for t := range s {
		s[t] = []*hcode{flatCode()}
		r.next[t] = 1
	}
	r.set.Store(&s)
}

// load reads the committed versions from the codes bucket.
func (r *codeRegistry) load(b *bolt.Bucket) error {
	return b.ForEach(func(k, v []byte) error {
		if len(k) != 2 || int(k[0]) >= len(r.next) || k[1] == 0 || len(v) != hSymbols {
			return fmt.Errorf("contentseen: read codes: corrupt code entry %x", k)
		}
		var lens [hSymbols]uint8
		copy(lens[:], v)
		c, err := newCode(lens)
		if err != nil {
			return fmt.Errorf("contentseen: read codes: table %d version %d: %w", k[0], k[1], err)
		}
		r.register(int(k[0]), int(k[1]), c)
		return nil
	})
}

// get returns version v of table t's code.
func (r *codeRegistry) get(t int, v uint8) (*hcode, error) {
	s := *r.set.Load()
	if int(v) >= len(s[t]) || s[t][v] == nil {
		return nil, fmt.Errorf("block written with code version %d, which table %d does not have", v, t)
	}
	return s[t][v], nil
}

// latest returns table t's newest committed code and its version.
func (r *codeRegistry) latest(t int) (uint8, *hcode) {
	s := *r.set.Load()
	for v := len(s[t]) - 1; ; v-- {
		if s[t][v] != nil {
			return uint8(v), s[t][v]
		}
	}
}

// add records c as table t's next version in b, inside the caller's write
// transaction tx; the version is used (by latest) once tx commits. A
// version number is handed out once: one whose transaction rolls back is
// never written by a block, and never reused. At 255 versions a table
// keeps its newest code.
func (r *codeRegistry) add(tx *bolt.Tx, b *bolt.Bucket, t int, c *hcode) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.next[t] > 255 {
		return nil
	}
	v := r.next[t]
	r.next[t]++
	if err := b.Put([]byte{byte(t), byte(v)}, append([]byte(nil), c.lens[:]...)); err != nil {
		return fmt.Errorf("contentseen: write code of table %d: %w", t, err)
	}
	tx.OnCommit(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.register(t, v, c)
	})
	return nil
}

// register makes c version v of table t's code. The caller holds r.mu or
// is the only user (load).
func (r *codeRegistry) register(t, v int, c *hcode) {
	s := *r.set.Load()
	ns := append(codeSet(nil), s...)
	ns[t] = append([]*hcode(nil), s[t]...)
	for len(ns[t]) <= v {
		ns[t] = append(ns[t], nil)
	}
	ns[t][v] = c
	r.set.Store(&ns)
	r.next[t] = max(r.next[t], v+1)
}
