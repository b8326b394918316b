package frontier

import (
	"errors"
	"fmt"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// CopyStats says what CopyTx kept and left behind.
type CopyStats struct {
	Done, Failed, Pending int // URLs kept, by state (pending includes in flight)
	Lost                  int // URLs or records that did not decode or disagreed, left out
	Requeued              int // URLs done whose page or drop was lost, queued again (in Pending)
}

// CopyTx copies the consistent part of the frontier kept in bucket of src
// ("" means "frontier") into the same bucket of dst, which must have none,
// for crawl repair: every seen URL with a known state, every queued,
// retried or in-flight item that decodes and whose URL is pending (one
// seen as nothing becomes pending), failed reasons and items of failed
// URLs; a pending URL with no item left is dropped (a later crawl that
// finds a link to it queues it again). The counts are recomputed and the
// sequence kept, so Open on dst resumes where src stood. src may be a
// read transaction on a salvaged copy.
//
// lost, when not nil, is asked about every URL done with a page stored or
// dropped ("stored...", "dropped..." outcomes): when it reports that the
// page or drop did not survive, the URL is queued again at depth 0 instead
// of kept as done, so the next crawl fetches it rather than never again.
func CopyTx(src, dst *bolt.Tx, bucket string, lost func(url, outcome string) bool) (CopyStats, error) {
	var st CopyStats
	if bucket == "" {
		bucket = "frontier"
	}
	from := src.Bucket([]byte(bucket))
	if from == nil {
		return st, nil
	}
	if dst.Bucket([]byte(bucket)) != nil {
		return st, errors.New("frontier: copy: the destination has a frontier")
	}
	to, err := dst.CreateBucket([]byte(bucket))
	if err != nil {
		return st, err
	}
	if err := to.SetSequence(from.Sequence()); err != nil {
		return st, err
	}
	subs := map[string]*bolt.Bucket{}
	for _, name := range [][]byte{bSeen, bQueue, bRetry, bInflight, bFailed, bFailedItem, bMeta} {
		b, err := to.CreateBucket(name)
		if err != nil {
			return st, err
		}
		subs[string(name)] = b
	}
	seen := subs[string(bSeen)]
	old := func(name []byte) *bolt.Bucket {
		if b := from.Bucket(name); b != nil {
			return b
		}
		return nil
	}
	// Seen states first.
	if b := old(bSeen); b != nil {
		if err := b.ForEach(func(k, v []byte) error {
			// A key that is no http(s) URL is damage too: it has no host
			// to queue it under.
			if len(v) == 0 || (v[0] != stPending && v[0] != stInflight && v[0] != stDone && v[0] != stFailed) || HostKey(string(k)) == "" {
				st.Lost++
				return nil
			}
			if v[0] == stInflight {
				v = []byte{stPending} // requeued below with its item
			}
			return seen.Put(k, v)
		}); err != nil {
			return st, err
		}
	}
	queued := map[string]bool{}
	open := func(url string) bool {
		if HostKey(url) == "" {
			return false // a damaged item's URL: no host to queue it under
		}
		v := seen.Get([]byte(url))
		if v == nil {
			if err := seen.Put([]byte(url), []byte{stPending}); err != nil {
				return false
			}
			return true
		}
		return v[0] == stPending && !queued[url]
	}
	queue := subs[string(bQueue)]
	put := func(it Item, key []byte) error {
		hb, err := queue.CreateBucketIfNotExists([]byte(HostKey(it.URL)))
		if err != nil {
			return err
		}
		queued[it.URL] = true
		return hb.Put(key, encodeItem(it))
	}
	if q := old(bQueue); q != nil {
		if err := q.ForEachBucket(func(host []byte) error {
			return q.Bucket(host).ForEach(func(k, v []byte) error {
				it, err := decodeItem(v)
				if _, kerr := parseQkey(k); err != nil || kerr != nil || !open(it.URL) {
					st.Lost++
					return nil
				}
				return put(it, k)
			})
		}); err != nil {
			return st, err
		}
	}
	// In-flight items go back to their queue, as New does on resume.
	if b := old(bInflight); b != nil {
		if err := b.ForEach(func(k, v []byte) error {
			if len(v) < 12 {
				st.Lost++
				return nil
			}
			it, err := decodeItem(v[12:])
			if _, kerr := parseQkey(v[:12]); err != nil || kerr != nil || it.URL != string(k) || !open(it.URL) {
				st.Lost++
				return nil
			}
			return put(it, v[:12:12])
		}); err != nil {
			return st, err
		}
	}
	retry := subs[string(bRetry)]
	if b := old(bRetry); b != nil {
		if err := b.ForEach(func(k, v []byte) error {
			it, err := decodeItem(v)
			if err != nil || len(k) != 16 || !open(it.URL) {
				st.Lost++
				return nil
			}
			queued[it.URL] = true
			return retry.Put(k, encodeItem(it))
		}); err != nil {
			return st, err
		}
	}
	failed, failedItem := subs[string(bFailed)], subs[string(bFailedItem)]
	if b := old(bFailed); b != nil {
		if err := b.ForEach(func(k, v []byte) error {
			if s := seen.Get(k); len(s) == 0 || s[0] != stFailed {
				st.Lost++
				return nil
			}
			return failed.Put(k, v)
		}); err != nil {
			return st, err
		}
	}
	if b := old(bFailedItem); b != nil {
		if err := b.ForEach(func(k, v []byte) error {
			if _, err := decodeItem(v); err != nil || failed.Get(k) == nil {
				return nil
			}
			return failedItem.Put(k, v)
		}); err != nil {
			return st, err
		}
	}
	// Pending URLs without an item cannot be fetched: forget them. Failed
	// ones without a reason get one.
	var forget, requeue [][]byte
	var c counts
	if err := seen.ForEach(func(k, v []byte) error {
		switch v[0] {
		case stPending:
			if !queued[string(k)] {
				forget = append(forget, append([]byte(nil), k...))
				return nil
			}
			c.pending++
		case stDone:
			outcome := string(v[1:])
			if lost != nil && (strings.HasPrefix(outcome, "stored") || strings.HasPrefix(outcome, "dropped")) && lost(string(k), outcome) {
				requeue = append(requeue, append([]byte(nil), k...))
				return nil
			}
			c.done++
		case stFailed:
			c.failed++
			if failed.Get(k) == nil {
				return failed.Put(k, []byte("unknown (the reason was lost; crawl repair)"))
			}
		}
		return nil
	}); err != nil {
		return st, err
	}
	for _, k := range forget {
		if err := seen.Delete(k); err != nil {
			return st, err
		}
	}
	st.Lost += len(forget)
	for _, k := range requeue {
		seq, err := to.NextSequence()
		if err != nil {
			return st, err
		}
		if err := put(Item{URL: string(k)}, qkey{0, seq}.bytes()); err != nil {
			return st, err
		}
		if err := seen.Put(k, []byte{stPending}); err != nil {
			return st, err
		}
		c.pending++
	}
	st.Requeued = len(requeue)
	st.Done, st.Failed, st.Pending = int(c.done), int(c.failed), int(c.pending)
	if err := subs[string(bMeta)].Put(kCounts, c.bytes()); err != nil {
		return st, fmt.Errorf("frontier: copy counts: %w", err)
	}
	return st, nil
}
