package storage

import (
	"context"
	"math"

	bolt "go.etcd.io/bbolt"
)

// Scans read a chunk of records in one read transaction, close it, then
// hand the records to fn. So memory stays bounded (one chunk), fn may take
// its time (write to a pipe, call other Store methods) without holding a
// read transaction open (a long one makes a growing bbolt file block its
// writer at remap time), and fn may even write to the DB. The price: a scan
// is not a snapshot; records added during it with higher IDs are included.
const (
	scanChunkRecords = 256
	scanChunkBytes   = 4 << 20 // decompressed text and body per chunk
)

// scan walks bucket sub of the store in key (ID) order from ID 1, decoding
// each record with decode (which returns the record and its size in
// bytes), and calls fn for each outside the transaction.
func scan[T any](ctx context.Context, s *Store, sub func(buckets) *bolt.Bucket,
	decode func(b buckets, k, v []byte) (T, int, error), fn func(T) error) error {
	next := uint64(1)
	for {
		var chunk []T
		more := false
		err := s.view(ctx, func(_ *bolt.Tx, b buckets) error {
			if b.top == nil {
				return nil
			}
			c := sub(b).Cursor()
			size := 0
			for k, v := c.Seek(itob(next)); k != nil; k, v = c.Next() {
				if len(chunk) >= scanChunkRecords || size >= scanChunkBytes {
					more = true
					next = btoi(k)
					return nil
				}
				rec, n, err := decode(b, k, v)
				if err != nil {
					return err
				}
				chunk = append(chunk, rec)
				size += n
				if btoi(k) == math.MaxUint64 {
					return nil
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, rec := range chunk {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(rec); err != nil {
				return err
			}
		}
		if !more {
			return nil
		}
	}
}

// Pages calls fn for every stored page in ID order, with its text and, if
// withBody, its body. It streams: at most one chunk (256 pages or about
// 4 MB of text and body) is in memory, and no transaction is open while fn
// runs. It is not a snapshot: pages stored meanwhile may be included. An
// error from fn stops the scan and is returned as is.
func (s *Store) Pages(ctx context.Context, withBody bool, fn func(*Page) error) error {
	return scan(ctx, s, func(b buckets) *bolt.Bucket { return b.meta },
		func(b buckets, k, v []byte) (*Page, int, error) {
			p, err := s.decodePage(b, k, v, true, withBody)
			if err != nil {
				return nil, 0, err
			}
			return p, len(p.Text) + len(p.Body), nil
		}, fn)
}

// PageHeaders is Pages without text and body (TextLen and BodyLen are
// set): for listings and statistics, it reads only the small metadata
// records and decompresses nothing.
func (s *Store) PageHeaders(ctx context.Context, fn func(*Page) error) error {
	return scan(ctx, s, func(b buckets) *bolt.Bucket { return b.meta },
		func(b buckets, k, v []byte) (*Page, int, error) {
			p, err := s.decodePage(b, k, v, false, false)
			return p, 0, err
		}, fn)
}
