package contentseen

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// ScanTx calls fn for every (id, fingerprint) the index records by id, in
// id order, inside the caller's transaction (read or write), stopping at
// and returning fn's first error. It reads the id-to-fingerprint bucket,
// not the tables, so it costs one sequential pass over 16 bytes per id;
// an id recorded twice appears once, with its last fingerprint. It is how
// an index is rebuilt with another layout (crawl index migrate: ScanTx
// into an AddBatch of a new index).
func (x *BoltIndex) ScanTx(tx *bolt.Tx, fn func(id uint64, fp Fingerprint) error) error {
	top, err := x.top(tx)
	if err != nil {
		return err
	}
	fps := top.Bucket(fpsBucket)
	if fps == nil {
		return fmt.Errorf("contentseen: bucket %q/%q missing", x.bucket, fpsBucket)
	}
	c := fps.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) != 8 || len(v) != 8 {
			return fmt.Errorf("contentseen: bucket %q/%q: bad entry %x -> %x", x.bucket, fpsBucket, k, v)
		}
		if err := fn(binary.BigEndian.Uint64(k), Fingerprint(binary.BigEndian.Uint64(v))); err != nil {
			return err
		}
	}
	return nil
}
