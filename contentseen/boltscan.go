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
	return ScanBoltTx(tx, string(x.bucket), fn)
}

// ScanBoltTx is ScanTx without opening the index: it reads the
// id-to-fingerprint bucket of the BoltIndex kept in bucket ("" means
// "contentseen") of tx's database, in storage format 2 or later, so that
// an index this version refuses to open can still be rebuilt from it.
func ScanBoltTx(tx *bolt.Tx, bucket string, fn func(id uint64, fp Fingerprint) error) error {
	if bucket == "" {
		bucket = "contentseen"
	}
	top := tx.Bucket([]byte(bucket))
	if top == nil {
		return fmt.Errorf("contentseen: no index in bucket %q", bucket)
	}
	fps := top.Bucket(fpsBucket)
	if fps == nil {
		return fmt.Errorf("contentseen: bucket %q/%q missing", bucket, fpsBucket)
	}
	c := fps.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) != 8 || len(v) != 8 {
			return fmt.Errorf("contentseen: bucket %q/%q: bad entry %x -> %x", bucket, fpsBucket, k, v)
		}
		if err := fn(binary.BigEndian.Uint64(k), Fingerprint(binary.BigEndian.Uint64(v))); err != nil {
			return err
		}
	}
	return nil
}

// BoltFormat is the storage format a new BoltIndex is written in. An index
// in an older format that this version still reads (format 3: BoltFormatTx
// reports it current) works as it is; rebuilding it writes this format.
const BoltFormat = formatVersion

// BoltFormatTx returns the storage format recorded by the BoltIndex kept
// in bucket ("" means "contentseen") of tx's database ("1" for an index
// from before formats were recorded, "" when there is none), and whether
// this version reads it.
func BoltFormatTx(tx *bolt.Tx, bucket string) (format string, current bool) {
	if bucket == "" {
		bucket = "contentseen"
	}
	top := tx.Bucket([]byte(bucket))
	if top == nil || top.Bucket(metaBucket) == nil {
		return "", false
	}
	f := string(top.Bucket(metaBucket).Get(formatKey))
	if f == "" {
		f = "1"
	}
	return f, readableFormat(f)
}
