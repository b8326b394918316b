package contentseen

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"
)

// Entry is a page in a Shared index: what any worker of a distributed
// crawl needs to judge a new page against it without the data directory of
// the worker that stored it.
type Entry struct {
	// Seq is the entry's number, given by Claim: unique in the index and
	// increasing in claim order. 0 in an entry not yet claimed.
	Seq uint64
	// ID names the page across workers (for example "worker-a/1234": the
	// worker's name and its local page id) and URL is the page's URL, for
	// the drop record of a copy. The index stores them as given; at most
	// MaxEntryText bytes together.
	ID, URL     string
	Fingerprint Fingerprint
	// Digest is the page's TextDigest; the zero digest means none (a thin
	// page) and never matches another.
	Digest [16]byte
	Sketch Sketch
	// Pending is set in returned entries claimed but not yet confirmed,
	// whose lease is live: the page may or may not get stored (see Shared).
	Pending bool
	// Deadline is a pending entry's lease end (server time); zero for a
	// committed one.
	Deadline time.Time
	// Distance is set in returned entries: Hamming distance from the
	// fingerprint asked about.
	Distance int
}

// MaxEntryText bounds len(ID)+len(URL) of an entry.
const MaxEntryText = 8192

// Token is the index's insert count seen by a Lookup: Claim checks only
// the entries claimed after it, so a claim costs the inserts since the
// look-up, not the index.
type Token uint64

// Claimed is Claim's answer: either the entry was inserted (Seq > 0,
// Conflicts empty) or not, because live entries within K (or with the same
// digest) were claimed after the token (Conflicts, nearest first), which the
// caller must judge before claiming again with Token.
type Claimed struct {
	Seq       uint64
	Conflicts []Entry
	Token     Token
}

// Shared is a ContentSeen index shared by the workers of a distributed crawl
// (processes on several machines): a check-and-insert of a fingerprint is
// atomic across them, so two copies fetched at the same moment by two
// workers are never both stored, and the judge stays the crawler's (the
// index finds candidates, the caller verifies them with their sketches).
// Implementations: SharedMem (in process, tests and oracle) and
// contentseen/redisindex (Redis).
//
// A page goes through three steps:
//
//  1. Lookup returns every live entry within K bits of the page's
//     fingerprint or with its digest, and a Token.
//  2. The caller judges them (Judge, or its own loop). When none is a
//     copy, Claim inserts the page as a pending entry, atomically with a
//     check of the entries claimed after the token: if one of them is
//     within K (or has the same digest) nothing is inserted and they come
//     back as conflicts, to judge in turn. Of two claims within K of each
//     other, the second to run therefore always sees the first.
//  3. After the page's store has committed (in the worker's own data
//     directory), Confirm(Seq, ID) makes the entry committed. A caller that will
//     not store the page calls Release.
//
// A pending entry holds a lease (the index's lease duration, counted on the
// index's clock: for Redis, the server's). A worker that dies between Claim
// and its store's commit never confirms: when the lease ends, the entry is
// ignored by Lookup and Claim and purged, so copies of a page nobody stored
// are never dropped as its duplicates. While the lease is live a pending
// entry is returned with Pending set: a page that is a copy of it must wait
// (Judge says Wait: requeue it for after the deadline) until it is confirmed
// (then it is a copy) or expires (then it may be stored). A worker that
// stored its page but crashed before Confirm confirms on restart, from the
// Seq it stored with the page: Confirm still succeeds while the entry has
// not been purged; after that it returns ErrLeaseLost, and the page must be
// judged and claimed again (a late confirm can leave two stored copies,
// never a copy dropped for nothing).
//
// Implementations are safe for concurrent use by many goroutines and
// processes. Returned entries belong to the caller. Errors are wrapped; a
// ctx error may leave a Claim done or not (its pending entry then expires
// unless confirmed), Confirm and Release are idempotent.
type Shared interface {
	// Layout returns the index's table layout and K its radius: Lookup and
	// Claim find every entry within K bits (K <= Layout().MaxK()).
	Layout() Layout
	K() int

	// Lookup returns the live entries (committed, or pending with a live
	// lease) within K bits of fp or with the digest d (when d is not zero),
	// sorted by distance then Seq, and the token to Claim with.
	Lookup(ctx context.Context, fp Fingerprint, d [16]byte) ([]Entry, Token, error)

	// Claim inserts e (its Seq, Pending, Deadline and Distance ignored) as
	// a pending entry unless a live entry within K of e.Fingerprint or with
	// its digest was claimed after tok; see Claimed. A token older than the
	// index keeps (SharedOptions.MaxLag claims), or ahead of the index (it
	// lost its last writes in a crash), gives ErrStaleToken: Lookup again.
	Claim(ctx context.Context, e Entry, tok Token) (Claimed, error)

	// Confirm commits the pending entry seq claimed with ID id: it is never
	// purged after. It is a no-op on a committed entry and returns
	// ErrLeaseLost for one purged or released. The id guards against a
	// seq given again after the shared store lost its last writes (a
	// crash of Redis): an entry seq with another ID counts as gone.
	Confirm(ctx context.Context, seq uint64, id string) error

	// Release removes the pending entry seq claimed with ID id (the
	// caller will not store the page). It is a no-op for an entry already
	// gone (or with another ID) and returns ErrCommitted for a committed
	// one.
	Release(ctx context.Context, seq uint64, id string) error

	// Close releases the client (not the shared data). Later calls return
	// ErrClosed.
	Close() error
}

// ClaimRef names a claim to confirm: the Seq Claim gave and the entry's ID.
type ClaimRef struct {
	Seq uint64
	ID  string
}

// BatchConfirmer is a Shared index that confirms many claims at once
// (contentseen/redisindex: one round trip for all). ConfirmBatch returns
// one error per claim, in their order, each what Confirm(Seq, ID) would
// return; it is safe for concurrent use. SharedMem does not implement it:
// callers check for it and call Confirm one claim at a time otherwise.
type BatchConfirmer interface {
	ConfirmBatch(ctx context.Context, claims []ClaimRef) []error
}

// Healer is a Shared index that can lose its last writes (a crash of the
// Redis server under appendfsync everysec) and heals that from what each
// worker remembers (contentseen/redisindex): the worker calls Heal about
// once a second, and after a restart its recent claims and confirms are
// written again before any new claim is let through. SharedMem does not
// implement it.
type Healer interface {
	// Heal checks whether the shared store restarted since the last call
	// and, if it did, writes this worker's recent claims again. The
	// report covers what happened since the last call, the replays made
	// from within Claim and Confirm included.
	Heal(ctx context.Context) (Healed, error)
}

// Healed is a Healer's report.
type Healed struct {
	// Restarts is how many restarts of the shared store this worker found.
	Restarts int
	// Replayed is how many of this worker's recent claims it wrote again
	// (those the store had lost, or whose confirm or release it had).
	Replayed int
	// Late is how many of those replays came after other workers could
	// claim again: a copy of one of their pages judged in between may be
	// stored beside it.
	Late int
}

// Errors of Shared implementations (wrapped: test with errors.Is).
var (
	ErrStaleToken = errors.New("contentseen: token too old, look up again")
	ErrLeaseLost  = errors.New("contentseen: pending entry expired and purged, or released")
	ErrCommitted  = errors.New("contentseen: entry already committed")
)

// SortEntries orders entries by distance, then Seq.
func SortEntries(es []Entry) {
	slices.SortFunc(es, func(a, b Entry) int {
		if c := cmp.Compare(a.Distance, b.Distance); c != 0 {
			return c
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
}

// Verdict is Judge's answer for a page.
type Verdict struct {
	// Copy is set when the page is a copy of the committed entry Copy: drop
	// it.
	Copy *Entry
	// Wait is set when the page is a copy of a live pending entry and of no
	// committed one: decide again after Wait.Deadline (requeue the page).
	Wait *Entry
	// Seq is set when the page was claimed: store it, then Confirm(Seq,
	// ID), or Release(Seq, ID) if it is not stored. JudgeClaim may set it
	// with Copy (the page was claimed in its look-up): release it; and
	// with Wait: Rejudge later, or release it.
	Seq uint64
	// looked is JudgeClaim's look-up, which Rejudge updates, and radius
	// the radius it looked within.
	looked LookupClaimed
	radius int
}

// maxJudgeRounds bounds Judge's claim attempts, each lost to a concurrent
// claim that turned out not to be a copy.
const maxJudgeRounds = 16

// Judge runs the check-and-insert of page e on s: Lookup, then isCopy on
// the candidates nearest first, then Claim, judging any conflicts the same
// way. isCopy reports whether e is a copy of a candidate (the crawler's
// judge: same digest, or sketches that verify); it sees committed and
// pending candidates alike. A copy of a committed entry wins over a copy
// of a pending one (Copy, not Wait).
func Judge(ctx context.Context, s Shared, e Entry, isCopy func(c Entry) bool) (Verdict, error) {
	cands, tok, err := s.Lookup(ctx, e.Fingerprint, e.Digest)
	if err != nil {
		return Verdict{}, err
	}
	return claimLoop(ctx, s, e, cands, tok, isCopy)
}

// claimLoop is Judge after its Lookup: judge the candidates cands, claim
// with tok when none is a copy, and judge the conflicts the same way.
func claimLoop(ctx context.Context, s Shared, e Entry, cands []Entry, tok Token, isCopy func(c Entry) bool) (Verdict, error) {
	for round := 0; ; round++ {
		if v, settled := judgeCandidates(cands, isCopy); settled {
			return v, nil
		}
		if round == maxJudgeRounds {
			return Verdict{}, errors.New("contentseen: judge: too many concurrent claims near this fingerprint")
		}
		c, err := s.Claim(ctx, e, tok)
		if errors.Is(err, ErrStaleToken) {
			if cands, tok, err = s.Lookup(ctx, e.Fingerprint, e.Digest); err != nil {
				return Verdict{}, err
			}
			continue
		}
		if err != nil {
			return Verdict{}, err
		}
		if len(c.Conflicts) == 0 {
			return Verdict{Seq: c.Seq}, nil
		}
		cands, tok = c.Conflicts, c.Token
	}
}

// judgeCandidates returns the verdict the candidates settle (a copy of a
// committed one, else of a pending one), or settled=false when none is a
// copy.
func judgeCandidates(cands []Entry, isCopy func(Entry) bool) (Verdict, bool) {
	var wait *Entry
	for i := range cands {
		c := &cands[i]
		if c.Pending && wait != nil || !isCopy(*c) {
			continue
		}
		if !c.Pending {
			return Verdict{Copy: c}, true
		}
		wait = c
	}
	if wait != nil {
		return Verdict{Wait: wait}, true
	}
	return Verdict{}, false
}
