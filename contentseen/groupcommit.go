package contentseen

import (
	"context"
	"fmt"
	"runtime"

	bolt "go.etcd.io/bbolt"
)

// maxGroup bounds the requests committed in one transaction, so that one
// group's dirty pages stay small and its callers are not kept waiting
// behind a huge commit.
const maxGroup = 4096

// request is one Seen or Add waiting for the committer.
type request struct {
	ctx context.Context
	id  uint64
	fp  Fingerprint
	add bool // Add rather than Seen

	// Set by the committer before it closes done.
	m     Match
	found bool
	err   error
	done  chan struct{}
}

// submit queues r and waits until it is committed or ctx ends.
func (x *BoltIndex) submit(ctx context.Context, r *request) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if x.readOnly {
		return errReadOnly // even a Seen that finds a match commits
	}
	x.mu.RLock()
	if x.closed {
		x.mu.RUnlock()
		return ErrClosed
	}
	select {
	case x.reqs <- r:
	case <-ctx.Done():
		x.mu.RUnlock()
		return ctx.Err()
	}
	x.mu.RUnlock()
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err() // r may still commit: see Index.Seen
	}
}

// commitLoop is the committer goroutine, started by NewBoltIndex and
// waited for by Close. While one transaction commits (fsync), new requests
// queue up; the next transaction takes all of them. Requests are handled
// in arrival order, each seeing the ones before it in the same
// transaction, so grouping does not change any answer.
func (x *BoltIndex) commitLoop() {
	defer close(x.done)
	group := make([]*request, 0, maxGroup)
	for r := range x.reqs {
		group = x.drain(append(group[:0], r))
		if len(group) < maxGroup {
			// Let the callers that the last commit released queue their
			// next request: a bigger group shares one commit's fsync and
			// dirty pages. A yield, not a wait: alone, a caller is not
			// delayed.
			runtime.Gosched()
			group = x.drain(group)
		}
		x.commit(group)
	}
}

// drain appends the requests queued now to group, up to maxGroup.
func (x *BoltIndex) drain(group []*request) []*request {
	for len(group) < maxGroup {
		select {
		case r, ok := <-x.reqs:
			if !ok {
				return group
			}
			group = append(group, r)
		default:
			return group
		}
	}
	return group
}

// commit runs a group in one write transaction. If the transaction fails,
// every request in it fails with that error (nothing of it was recorded);
// a request whose ctx ended before its turn is skipped.
func (x *BoltIndex) commit(group []*request) {
	err := x.db.Update(func(tx *bolt.Tx) error {
		for _, r := range group {
			if err := r.ctx.Err(); err != nil {
				r.err = err
				continue
			}
			if r.add {
				r.err = x.AddTx(tx, r.id, r.fp)
			} else {
				r.m, r.found, r.err = x.SeenTx(tx, r.id, r.fp)
			}
			if r.err != nil {
				return r.err
			}
		}
		return nil
	})
	for _, r := range group {
		if err != nil {
			// Nothing of the group was recorded, whatever a request's
			// look-up found inside the transaction; a request whose ctx
			// ended meanwhile gets the commit's error too, so that a nil
			// error always means recorded.
			r.m, r.found = Match{}, false
			r.err = fmt.Errorf("contentseen: group commit of %d: %w", len(group), err)
		}
		close(r.done)
	}
}
