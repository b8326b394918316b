package contentseen

import (
	"context"
	"fmt"
)

// LookupClaimer is a Shared index that looks up and claims a page in one
// atomic step (contentseen/redisindex: one round trip where Lookup and
// Claim take two). JudgeClaim uses it.
type LookupClaimer interface {
	Shared
	// LookupClaim returns what Lookup(e.Fingerprint, e.Digest) returns
	// and, in the same atomic step, inserts e as a pending entry, as Claim
	// would, unless a live entry has e's digest (an exact copy, committed
	// or pending: then nothing is inserted and Seq is 0). The candidates
	// are the live entries at that step, without e itself; an entry
	// claimed after it sees e, as after a Claim. The caller judges the
	// candidates: when e is a copy of one, it must Release the claim (Seq)
	// as for any page it does not store. A call retried after its reply
	// was lost finds its own pending entry and returns it.
	LookupClaim(ctx context.Context, e Entry) (LookupClaimed, error)
}

// LookupClaimed is LookupClaim's answer.
type LookupClaimed struct {
	// Candidates are the live entries within K of the page or with its
	// digest, nearest first, as Lookup returns them.
	Candidates []Entry
	// Seq is the page's pending entry, 0 when a live entry with its digest
	// kept it from being inserted.
	Seq uint64
	// Token is the token to Claim with when Seq is 0.
	Token Token
}

// JudgeClaim is Judge on an index that looks up and claims at once: the
// page is claimed in the look-up's step (one round trip for a new page on
// Redis, where Judge takes two), then its candidates are judged. When the
// page is a copy of a committed candidate, the verdict is Copy with Seq
// set to the page's claim, which the caller releases (Release, or with
// its own commands on Redis) as for any page it does not store. When it
// is a copy of a pending one only, the claim is released here and the
// verdict is Wait (Seq 0). When the look-up claimed nothing (an exact
// copy's digest is live) and no candidate is a copy, it claims with the
// token as Judge does.
func JudgeClaim(ctx context.Context, s LookupClaimer, e Entry, isCopy func(c Entry) bool) (Verdict, error) {
	lc, err := s.LookupClaim(ctx, e)
	if err != nil {
		return Verdict{}, err
	}
	v, settled := judgeCandidates(lc.Candidates, isCopy)
	switch {
	case settled && v.Wait != nil && lc.Seq != 0:
		// Judged again after the wait, by a look-up that must not find
		// this claim as a candidate.
		if err := s.Release(ctx, lc.Seq, e.ID); err != nil {
			return Verdict{}, fmt.Errorf("contentseen: judge: release claim %d of a page waiting for a copy: %w", lc.Seq, err)
		}
		return v, nil
	case settled:
		v.Seq = lc.Seq
		return v, nil
	case lc.Seq != 0:
		return Verdict{Seq: lc.Seq}, nil
	}
	return claimLoop(ctx, s, e, lc.Candidates, lc.Token, isCopy)
}
