package contentseen

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
)

// Match is a stored fingerprint found near a query.
type Match struct {
	ID          uint64      // id recorded with the fingerprint
	Fingerprint Fingerprint // the stored fingerprint
	Distance    int         // Hamming distance to the query
}

// Index answers "is a stored fingerprint within k bits of this one?" and
// records new fingerprints. Implementations: MemIndex (in memory) and
// BoltIndex (persistent, bbolt).
//
// The index is a set of fingerprints, each carrying the id it was first
// recorded with. Recording a fingerprint that is already stored changes
// nothing (the first id stays). Ids are the caller's (page ids); the index
// does not check that they are unique.
//
// Implementations are safe for concurrent use. After Close every method
// returns ErrClosed (Len returns 0).
type Index interface {
	// Seen looks up every stored fingerprint within the index's K of fp.
	// If there is none it records (id, fp) and returns found=false. If
	// there is one it records nothing and returns the best match: smallest
	// distance, ties broken by smallest id. Look-up and insert are one
	// atomic step: of two concurrent calls with fingerprints within K of
	// each other exactly one is admitted (found=false). If the error is
	// the ctx's, fp may or may not have been recorded (the request may
	// already have been queued); other errors mean it was not.
	Seen(ctx context.Context, id uint64, fp Fingerprint) (m Match, found bool, err error)

	// Near returns every stored fingerprint within k bits of fp, sorted by
	// distance then id. k must be in 0..MaxK() of the index's layout; a
	// larger k is an error because the tables cannot guarantee those
	// matches. A k above the layout's K reads several prefixes per table
	// (a multi-probe query, Layout.ProbeRadius) and costs more.
	Near(ctx context.Context, fp Fingerprint, k int) ([]Match, error)

	// Add records (id, fp) without looking for near-duplicates.
	Add(ctx context.Context, id uint64, fp Fingerprint) error

	// Len returns the number of distinct stored fingerprints.
	Len() int

	// Close releases the index. Later calls return ErrClosed.
	Close() error
}

// ErrClosed is returned by an index's methods after Close.
var ErrClosed = errors.New("contentseen: index closed")

// checkK reports an error unless 0 <= k <= l.MaxK().
func checkK(l Layout, k int) error {
	if k < 0 || k > l.MaxK() {
		return fmt.Errorf("contentseen: near: k=%d outside 0..%d of layout %s", k, l.MaxK(), l.Name())
	}
	return nil
}

// sortMatches orders matches by distance, then id, then fingerprint.
func sortMatches(ms []Match) {
	slices.SortFunc(ms, func(a, b Match) int {
		if c := cmp.Compare(a.Distance, b.Distance); c != 0 {
			return c
		}
		if c := cmp.Compare(a.ID, b.ID); c != 0 {
			return c
		}
		return cmp.Compare(a.Fingerprint, b.Fingerprint)
	})
}

// addMatch appends m unless its fingerprint is already in ms: a match
// shows up in every table whose leading blocks it shares with the query.
func addMatch(ms []Match, m Match) []Match {
	if hasFingerprint(ms, m.Fingerprint) {
		return ms
	}
	return append(ms, m)
}

func hasFingerprint(ms []Match, fp Fingerprint) bool {
	for _, m := range ms {
		if m.Fingerprint == fp {
			return true
		}
	}
	return false
}

// best returns the match with the smallest distance, then smallest id.
func best(ms []Match) Match {
	b := ms[0]
	for _, m := range ms[1:] {
		if m.Distance < b.Distance || m.Distance == b.Distance && m.ID < b.ID {
			b = m
		}
	}
	return b
}
