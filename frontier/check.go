package frontier

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// CheckTx checks the frontier kept in bucket of tx's database ("" means
// "frontier") without opening it, and calls problem for every inconsistency
// (at most the first 100): a seen state that is not one of the four, an
// item that does not decode, a queued, retried or in-flight URL whose seen
// state is not pending or in flight, a failed URL not seen as failed, and
// counts that differ from the seen states (pending and in flight are one
// figure: a stopped crawl's in-flight URLs are pending again on resume). It
// reads every key of the frontier once and holds nothing per URL. A
// database without a frontier checks as empty.
func CheckTx(tx *bolt.Tx, bucket string, problem func(string)) error {
	if bucket == "" {
		bucket = "frontier"
	}
	top := tx.Bucket([]byte(bucket))
	if top == nil {
		return nil
	}
	n := 0
	report := func(format string, args ...any) {
		if n++; n <= 100 {
			problem(fmt.Sprintf(format, args...))
		}
	}
	sub := func(name []byte) *bolt.Bucket {
		b := top.Bucket(name)
		if b == nil {
			report("bucket %q is missing", name)
		}
		return b
	}
	seen, queue, retry, inflight, failed, meta := sub(bSeen), sub(bQueue), sub(bRetry), sub(bInflight), sub(bFailed), sub(bMeta)
	if seen == nil || queue == nil || retry == nil || inflight == nil || failed == nil || meta == nil {
		return nil
	}
	var states counts
	err := seen.ForEach(func(k, v []byte) error {
		if len(v) == 0 {
			report("URL %q has no state", k)
			return nil
		}
		switch v[0] {
		case stPending:
			states.pending++
		case stInflight:
			states.inflight++
		case stDone:
			states.done++
		case stFailed:
			states.failed++
		default:
			report("URL %q has unknown state %q", k, v[0])
		}
		return nil
	})
	if err != nil {
		return err
	}
	pendingURL := func(where string, url string) {
		v := seen.Get([]byte(url))
		if len(v) == 0 || (v[0] != stPending && v[0] != stInflight) {
			report("%s URL %q is not pending in the seen set", where, url)
		}
	}
	queued := 0
	err = queue.ForEachBucket(func(host []byte) error {
		hb := queue.Bucket(host)
		return hb.ForEach(func(k, v []byte) error {
			queued++
			if _, err := parseQkey(k); err != nil {
				report("queue of %q: %v", host, err)
				return nil
			}
			it, err := decodeItem(v)
			if err != nil {
				report("queue of %q: %v", host, err)
				return nil
			}
			pendingURL("queued", it.URL)
			return nil
		})
	})
	if err != nil {
		return err
	}
	err = retry.ForEach(func(k, v []byte) error {
		queued++
		it, err := decodeItem(v)
		if err != nil || len(k) != 16 {
			report("retry entry %x: bad key or item (%v)", k, err)
			return nil
		}
		pendingURL("retried", it.URL)
		return nil
	})
	if err != nil {
		return err
	}
	err = inflight.ForEach(func(k, v []byte) error {
		queued++
		if len(v) < 12 {
			report("in-flight record of %q is %d bytes", k, len(v))
			return nil
		}
		if _, err := decodeItem(v[12:]); err != nil {
			report("in-flight record of %q: %v", k, err)
		}
		pendingURL("in-flight", string(k))
		return nil
	})
	if err != nil {
		return err
	}
	err = failed.ForEach(func(k, _ []byte) error {
		if v := seen.Get(k); len(v) == 0 || v[0] != stFailed {
			report("failed URL %q is not failed in the seen set", k)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if open := states.pending + states.inflight; int64(queued) != open {
		report("%d URLs are pending or in flight, but %d are queued", open, queued)
	}
	c, err := parseCounts(meta.Get(kCounts))
	if err != nil {
		report("%v", err)
		return nil
	}
	if c.pending+c.inflight != states.pending+states.inflight || c.done != states.done || c.failed != states.failed {
		report("counts say %d pending, %d done, %d failed; the seen set has %d, %d, %d",
			c.pending+c.inflight, c.done, c.failed, states.pending+states.inflight, states.done, states.failed)
	}
	return nil
}
