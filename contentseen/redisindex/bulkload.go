package redisindex

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/simcrawl/simcrawl/contentseen"
)

// BulkLoad's sizes: fields per append script and scripts per pipelined
// round trip (as Load's, well within a 3 s read timeout).
const (
	bulkFields  = 512
	bulkPerPipe = 8
)

// BulkLoad inserts es as committed entries, as Load does and with the same
// keys (byte for byte those Claim and Confirm write for the same entries
// in the same order), but for an index that no worker is using: a
// migration, a benchmark's set-up. It takes the seqs of all of es at
// once, then builds each bucket's records, each digest's seqs and the
// records in the client and appends them with one write per bucket.
// Load rewrites a bucket for every entry that goes into it, which on 4x16
// at 10M is a value of 150 records per table per entry; BulkLoad rewrites
// it once per call, so give it as many entries as memory allows (the
// records and buckets of all of es are built in the client first).
//
// Between the first step and the last the counter is ahead of the
// entries: a worker's Lookup then would give a token past entries it
// cannot see yet, and a Claim with it would not check them, so a copy of
// a page being loaded could be stored. Hence idle indexes only. It is not
// atomic and not retried; an error leaves part of es loaded.
func (x *Index) BulkLoad(ctx context.Context, es []contentseen.Entry) error {
	if x.isClosed() {
		return contentseen.ErrClosed
	}
	if len(es) == 0 {
		return nil
	}
	for _, e := range es {
		if n := len(e.ID) + len(e.URL); n > contentseen.MaxEntryText {
			return fmt.Errorf("redisindex: bulk load: id and url of %d bytes, more than %d", n, contentseen.MaxEntryText)
		}
	}
	// Pipelined EVALSHAs do not fall back to EVAL: after a restart the
	// script must be loaded again first.
	if err := appendScript.Load(ctx, x.rdb).Err(); err != nil {
		return fmt.Errorf("redisindex: bulk load: load script into redis at %s: %w", x.addr, err)
	}
	first, err := reserveScript.Run(ctx, x.rdb, []string{x.keys.meta, x.keys.seq}, len(es)).Uint64()
	if err != nil {
		return fmt.Errorf("redisindex: bulk load into redis at %s: reserve seqs: %w", x.addr, x.lost(err))
	}
	l := x.opts.Layout
	records := make([]string, 0, 2*len(es))
	tables := make([]map[string][]byte, l.Tables())
	for t := range tables {
		tables[t] = map[string][]byte{}
	}
	digests := map[string][]byte{}
	var rec [16]byte
	for i, e := range es {
		seq := first + uint64(i)
		records = append(records, strconv.FormatUint(seq, 10), x.encodeEntry(e))
		binary.BigEndian.PutUint64(rec[:8], uint64(e.Fingerprint))
		binary.BigEndian.PutUint64(rec[8:], seq)
		for t, m := range tables {
			b := bucket(l.Permute(t, e.Fingerprint), l.PrefixBits(t), x.width)
			m[b] = append(m[b], rec[:]...)
		}
		if e.Digest != ([16]byte{}) {
			d := string(e.Digest[:])
			digests[d] = append(digests[d], rec[8:]...)
		}
	}
	if err := x.appendAll(ctx, x.keys.entries, records); err != nil {
		return err
	}
	if err := x.appendAll(ctx, x.keys.digests, flatten(digests)); err != nil {
		return err
	}
	for t, m := range tables {
		if err := x.appendAll(ctx, x.keys.tables[t], flatten(m)); err != nil {
			return err
		}
	}
	return nil
}

// flatten returns m as field, value, field, value...
func flatten(m map[string][]byte) []string {
	out := make([]string, 0, 2*len(m))
	for k, v := range m {
		out = append(out, k, string(v))
	}
	return out
}

// appendAll appends the (field, bytes) pairs of kv to hash key, bulkFields
// a script, bulkPerPipe scripts a round trip.
func (x *Index) appendAll(ctx context.Context, key string, kv []string) error {
	keys := []string{x.keys.meta, key}
	for len(kv) > 0 {
		pipe := x.rdb.Pipeline()
		for range bulkPerPipe {
			if len(kv) == 0 {
				break
			}
			part := kv[:min(len(kv), 2*bulkFields)]
			kv = kv[len(part):]
			args := make([]any, len(part))
			for i, s := range part {
				args[i] = s
			}
			appendScript.EvalSha(ctx, pipe, keys, args...)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return fmt.Errorf("redisindex: bulk load into redis at %s: %w", x.addr, x.lost(err))
		}
	}
	return nil
}
