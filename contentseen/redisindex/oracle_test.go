package redisindex

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/contentseen/contentseentest"
	"github.com/simcrawl/simcrawl/internal/redistest"
)

// The Redis index answers exactly as contentseen.SharedMem, the oracle,
// under one random sequence of Lookup, Claim (with fresh and older
// tokens), Confirm and Release (right and wrong IDs), on fingerprints
// planted at distance 0..K+1 of earlier ones, for the radii the crawler
// uses; then its keys are consistent. 700 steps a radius (20,000 with
// SIMCRAWL_BIG=1): about 570 claims, 110-130 of them with a token older
// than MaxLag (64), 8-14 answered with conflicts, and hundreds
// of settlements.
func TestOracleSharedMem(t *testing.T) {
	n := 700
	if os.Getenv("SIMCRAWL_BIG") != "" {
		n = 20000
	}
	for _, k := range []int{0, 3, 7} {
		t.Run(fmt.Sprint("k=", k), func(t *testing.T) {
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			r := rand.New(rand.NewPCG(seed, uint64(k)))
			so := contentseen.SharedOptions{K: k, Lease: time.Hour, MaxLag: 64}
			mem, err := contentseen.NewSharedMem(so)
			if err != nil {
				t.Fatal(err)
			}
			defer mem.Close()
			red := open(t, redistest.Client(t, sharedAddr), Options{Name: newName(), SharedOptions: so})
			compareWithOracle(t, seed, r, mem, red, k, n)
			checkConsistent(t, red)
		})
	}
}

func compareWithOracle(t *testing.T, seed uint64, r *rand.Rand, mem *contentseen.SharedMem, red *Index, k, n int) {
	ctx := context.Background()
	var fps []contentseen.Fingerprint
	var digests [][16]byte
	var toks []contentseen.Token
	type claimed struct {
		seq uint64
		id  string
	}
	var pending []claimed
	for i := range n {
		var fp contentseen.Fingerprint
		if len(fps) == 0 || r.IntN(3) == 0 {
			fp = contentseen.Fingerprint(r.Uint64())
		} else {
			fp = flip(r, fps[r.IntN(len(fps))], r.IntN(k+2)) // planted at 0..K+1
		}
		e := contentseentest.Entry(fmt.Sprintf("w/%d", i), fp, r.Uint64())
		switch {
		case r.IntN(5) == 0:
			e.Digest = [16]byte{}
		case r.IntN(6) == 0 && len(digests) > 0:
			e.Digest = digests[r.IntN(len(digests))]
		}
		gm, tm, err := mem.Lookup(ctx, fp, e.Digest)
		if err != nil {
			t.Fatal(err)
		}
		gr, tr, err := red.Lookup(ctx, fp, e.Digest)
		if err != nil {
			t.Fatal(err)
		}
		if tm != tr || !sameEntries(gm, gr) {
			t.Fatalf("seed %d step %d: Lookup(%s) = %v token %d, oracle %v token %d", seed, i, fp, seqs(gr), tr, seqs(gm), tm)
		}
		toks = append(toks, tm)
		tok := tm
		if r.IntN(4) == 0 {
			tok = toks[r.IntN(len(toks))] // an older token: conflicts, or stale
		}
		cm, errm := mem.Claim(ctx, e, tok)
		cr, errr := red.Claim(ctx, e, tok)
		if !errors.Is(errr, contentseen.ErrStaleToken) && errr != nil || errors.Is(errm, contentseen.ErrStaleToken) != errors.Is(errr, contentseen.ErrStaleToken) {
			t.Fatalf("seed %d step %d: Claim(%s, %d) = %v, oracle %v", seed, i, fp, tok, errr, errm)
		}
		if cm.Seq != cr.Seq || cm.Token != cr.Token || !sameEntries(cm.Conflicts, cr.Conflicts) {
			t.Fatalf("seed %d step %d: Claim(%s, %d) = seq %d token %d conflicts %v, oracle seq %d token %d conflicts %v",
				seed, i, fp, tok, cr.Seq, cr.Token, seqs(cr.Conflicts), cm.Seq, cm.Token, seqs(cm.Conflicts))
		}
		if cm.Seq != 0 {
			fps, digests = append(fps, fp), append(digests, e.Digest)
			pending = append(pending, claimed{cm.Seq, e.ID})
		}
		// Settle a random pending claim: confirm, release, with its ID or
		// another; or leave it pending.
		if len(pending) > 0 && r.IntN(3) > 0 {
			j := r.IntN(len(pending))
			p := pending[j]
			id := p.id
			if r.IntN(8) == 0 {
				id = "w/other"
			}
			var em, er error
			if r.IntN(5) == 0 {
				em, er = mem.Release(ctx, p.seq, id), red.Release(ctx, p.seq, id)
			} else {
				em, er = mem.Confirm(ctx, p.seq, id), red.Confirm(ctx, p.seq, id)
			}
			if !sameErr(em, er) {
				t.Fatalf("seed %d step %d: settle %d as %q = %v, oracle %v", seed, i, p.seq, id, er, em)
			}
			if id == p.id && r.IntN(2) == 0 {
				pending = append(pending[:j], pending[j+1:]...)
			}
		}
	}
}

func sameErr(a, b error) bool {
	for _, e := range []error{contentseen.ErrLeaseLost, contentseen.ErrCommitted, contentseen.ErrStaleToken} {
		if errors.Is(a, e) != errors.Is(b, e) {
			return false
		}
	}
	return (a == nil) == (b == nil)
}

// sameEntries compares entries in everything but the lease end, which the
// two indexes take from different clocks.
func sameEntries(a, b []contentseen.Entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Seq != y.Seq || x.ID != y.ID || x.URL != y.URL || x.Fingerprint != y.Fingerprint || x.Digest != y.Digest ||
			x.Sketch != y.Sketch || x.Pending != y.Pending || x.Distance != y.Distance || x.Deadline.IsZero() != y.Deadline.IsZero() {
			return false
		}
	}
	return true
}

func seqs(es []contentseen.Entry) []string {
	var out []string
	for _, e := range es {
		p := ""
		if e.Pending {
			p = "p"
		}
		out = append(out, fmt.Sprintf("%d%s@%d", e.Seq, p, e.Distance))
	}
	return out
}

// flip returns fp with n distinct random bits flipped.
func flip(r *rand.Rand, fp contentseen.Fingerprint, n int) contentseen.Fingerprint {
	var m uint64
	for bits.OnesCount64(m) < n {
		m |= 1 << r.IntN(64)
	}
	return fp ^ contentseen.Fingerprint(m)
}
