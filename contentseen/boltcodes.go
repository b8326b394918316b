package contentseen

import (
	"fmt"
	"sync"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
)

// codesBucket holds every table's code versions: key table number (1
// byte) + version (1 byte), value the 64 code lengths. Version 0, the flat
// six-bit code, is implicit.
var codesBucket = []byte("codes")

// codeSet is every table's code versions, indexed [table][version]; a nil
// entry is a version number that was never committed. It is replaced, never
// changed, so readers use it without a lock.
type codeSet [][]*hcode

// codeRegistry is a BoltIndex's code versions in memory.
type codeRegistry struct {
	set atomic.Pointer[codeSet]
	mu  sync.Mutex // serialises add
}

func (r *codeRegistry) init(tables int) {
	s := make(codeSet, tables)
	for t := range s {
		s[t] = []*hcode{flatCode()}
	}
	r.set.Store(&s)
}

// load reads the committed versions from the codes bucket.
func (r *codeRegistry) load(b *bolt.Bucket) error {
	s := *r.set.Load()
	s = append(codeSet(nil), s...)
	err := b.ForEach(func(k, v []byte) error {
		if len(k) != 2 || int(k[0]) >= len(s) || k[1] == 0 || len(v) != hSymbols {
			return fmt.Errorf("corrupt code entry %x", k)
		}
		var lens [hSymbols]uint8
		copy(lens[:], v)
		c, err := newCode(lens)
		if err != nil {
			return fmt.Errorf("code of table %d version %d: %w", k[0], k[1], err)
		}
		t, ver := int(k[0]), int(k[1])
		for len(s[t]) <= ver {
			s[t] = append(s[t], nil)
		}
		s[t][ver] = c
		return nil
	})
	if err != nil {
		return fmt.Errorf("contentseen: read codes: %w", err)
	}
	r.set.Store(&s)
	return nil
}

// get returns version v of table t's code.
func (r *codeRegistry) get(t int, v uint8) (*hcode, error) {
	s := *r.set.Load()
	if int(v) >= len(s[t]) || s[t][v] == nil {
		return nil, fmt.Errorf("block written with code version %d, which table %d does not have", v, t)
	}
	return s[t][v], nil
}

// latest returns table t's newest code and its version.
func (r *codeRegistry) latest(t int) (uint8, *hcode) {
	s := *r.set.Load()
	for v := len(s[t]) - 1; ; v-- {
		if s[t][v] != nil {
			return uint8(v), s[t][v]
		}
	}
}

// add records c as table t's next version in b (inside the caller's write
// transaction) and in memory at once, so blocks written in the same
// transaction can use it. A version whose transaction rolls back stays in
// memory unused, and its number is not reused. When 255 versions exist the
// newest is returned instead.
func (r *codeRegistry) add(b *bolt.Bucket, t int, c *hcode) (uint8, *hcode, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := *r.set.Load()
	if len(s[t]) > 255 {
		v, c := r.latest(t)
		return v, c, nil
	}
	v := uint8(len(s[t]))
	if err := b.Put([]byte{byte(t), v}, append([]byte(nil), c.lens[:]...)); err != nil {
		return 0, nil, fmt.Errorf("contentseen: write code of table %d: %w", t, err)
	}
	ns := append(codeSet(nil), s...)
	ns[t] = append(append([]*hcode(nil), s[t]...), c)
	r.set.Store(&ns)
	return v, c, nil
}
