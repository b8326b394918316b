package contentseen

import (
	"context"
	"errors"
)

// LookupClaimer is a Shared index that looks up and claims a page in one
// atomic step (contentseen/redisindex: one round trip where Lookup and
// Claim take two). JudgeClaim uses it.
type LookupClaimer interface {
	Shared
	// LookupClaim returns what Lookup(e.Fingerprint, e.Digest) returns,
	// but within radius bits (at most K: the page's own radius, as the
	// judge uses it), and, in the same atomic step, inserts e as a
	// pending entry, as Claim would, unless a live entry has e's digest
	// (an exact copy, committed or pending: then nothing is inserted and
	// Seq is 0). The candidates are the live entries at that step, without
	// e itself; an entry claimed after it sees e (within K), as after a
	// Claim. The caller judges the
	// candidates: when e is a copy of one, it must Release the claim (Seq)
	// as for any page it does not store. A call retried after its reply
	// was lost finds its own pending entry and returns it. ErrStaleToken
	// means the index refused to claim for a while (a Redis restart
	// settling), or that a candidate was gone when its entry was read
	// after the atomic step (it may live on under another seq after a
	// restart; the claim was released): look up again.
	LookupClaim(ctx context.Context, e Entry, radius int) (LookupClaimed, error)
	// Entries returns the live entries among seqs as they are now, in
	// seq order, those gone (released, expired, never claimed) left out;
	// Distance is 0. Rejudge reads the entries a page waits for with it.
	Entries(ctx context.Context, seqs []uint64) ([]Entry, error)
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
// Redis, where Judge takes two), then its candidates within radius (see
// LookupClaim) are judged. When the
// page is a copy of a committed candidate, the verdict is Copy with Seq
// set to the page's claim, which the caller releases (Release, or with
// its own commands on Redis) as for any page it does not store. When it
// is a copy of a pending one only, the verdict is Wait, holding the claim
// (Seq) while the caller waits: Rejudge after a while, or Release it. When
// the look-up claimed nothing (an exact copy's digest is live) and no
// candidate is a copy, it claims with the token as Judge does.
func JudgeClaim(ctx context.Context, s LookupClaimer, e Entry, radius int, isCopy func(c Entry) bool) (Verdict, error) {
	for round := 0; ; round++ {
		lc, err := s.LookupClaim(ctx, e, radius)
		if errors.Is(err, ErrStaleToken) && round < maxJudgeRounds {
			continue // the index refused to claim for a while (redisindex: a restart settling): look up again
		}
		if err != nil {
			return Verdict{}, err
		}
		v, err := judgeClaimed(ctx, s, e, lc, isCopy)
		v.radius = radius
		return v, err
	}
}

// judgeClaimed is JudgeClaim after its look-up lc (or Rejudge's update of
// it).
func judgeClaimed(ctx context.Context, s Shared, e Entry, lc LookupClaimed, isCopy func(c Entry) bool) (Verdict, error) {
	v, settled := judgeCandidates(lc.Candidates, isCopy)
	switch {
	case settled:
		v.Seq, v.looked = lc.Seq, lc
		return v, nil
	case lc.Seq != 0:
		return Verdict{Seq: lc.Seq}, nil
	}
	return claimLoop(ctx, s, e, lc.Candidates, lc.Token, isCopy)
}

// Rejudge judges page e again after JudgeClaim's (or Rejudge's) verdict v
// said Wait: it reads the pending candidates as they are now (Entries:
// one round trip), drops those gone, and judges the candidates again. The
// claim v holds stands for the page, since every entry claimed after it
// sees it: the verdict is Copy (release the claim), Wait again, or Seq
// (store the page); without a claim (an exact copy's digest was pending)
// it claims with the look-up's token as Judge does. A Wait that holds no
// look-up (a conflict of that claim) is judged again from the start
// (Judge); a v that is no Wait is returned as it is.
//
// When a pending candidate is gone, the page is judged again from the
// start (its own claim released first, JudgeClaim after): the candidate
// may have been released or have expired, but it may also live on under
// another seq, written again by its worker after a Redis restart lost it
// (redisindex's replay), and taking it for released would store a copy of
// a stored page.
func Rejudge(ctx context.Context, s LookupClaimer, e Entry, v Verdict, isCopy func(c Entry) bool) (Verdict, error) {
	switch {
	case v.Wait == nil:
		return v, nil
	case v.looked.Candidates == nil:
		return Judge(ctx, s, e, isCopy)
	}
	lc := v.looked
	var pend []uint64
	for _, c := range lc.Candidates {
		if c.Pending {
			pend = append(pend, c.Seq)
		}
	}
	now, err := s.Entries(ctx, pend)
	if err != nil {
		return Verdict{}, err
	}
	cur := make(map[uint64]Entry, len(now))
	for _, c := range now {
		cur[c.Seq] = c
	}
	cands := make([]Entry, 0, len(lc.Candidates))
	for _, c := range lc.Candidates {
		if c.Pending {
			n, ok := cur[c.Seq]
			if !ok {
				return judgeAgain(ctx, s, e, v, isCopy)
			}
			n.Distance = c.Distance
			c = n
		}
		cands = append(cands, c)
	}
	lc.Candidates = cands
	w, err := judgeClaimed(ctx, s, e, lc, isCopy)
	w.radius = v.radius
	return w, err
}

// judgeAgain releases the claim Wait verdict v holds for page e and judges
// e from the start, within v's radius: a fresh look-up would find the page's
// own pending entry by its digest and take the page for an exact copy.
func judgeAgain(ctx context.Context, s LookupClaimer, e Entry, v Verdict, isCopy func(c Entry) bool) (Verdict, error) {
	if v.Seq != 0 {
		if err := s.Release(ctx, v.Seq, e.ID); err != nil {
			return Verdict{}, err
		}
	}
	return JudgeClaim(ctx, s, e, v.radius, isCopy)
}
