package redisindex

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/simcrawl/simcrawl/contentseen"
)

// Healing lost writes (see doc.go, "Leases, restarts and lost writes").
// Each Index remembers the claims it made, confirmed or released in the
// last keepRecent; the scripts notice a restart of the server by its
// run_id (epoch in scripts.go) and then refuse claims for the settle
// window, while every worker writes its remembered claims again (replay).

const (
	// DefaultSettle is how long claims wait after the server restarted
	// (Options.Settle): longer than a worker needs to notice the restart
	// and replay (its Heal runs once a second, a call retries at most
	// redisconn.MaxBackoff apart, and a replay is a round trip or two).
	DefaultSettle = 10 * time.Second
	// keepRecent is how long a write is remembered after a check that the
	// server is still the process it was written to: far beyond the
	// second or two of writes appendfsync everysec can lose.
	keepRecent = 10 * time.Second
	// seqJump is how far the seq counter moves at a restart, so that a
	// token from before it (at most a lost second of claims ahead of the
	// restored counter) is stale, never taken for one from after.
	seqJump = 1 << 20
	// replayBatch bounds the claims of one replay script.
	replayBatch = 256
)

// The states of a remembered claim, as replayScript takes them.
const (
	statePending   = "p"
	stateConfirmed = "c"
	stateReleased  = "r"
)

// recentClaim is a claim this Index made in the last keepRecent.
type recentClaim struct {
	seqs     []uint64 // its seqs, the current one last (a replay gives a new one)
	id       string
	rec      string // the entry record, as encodeEntry made it
	deadline int64  // lease end, ms on the server's clock
	state    string
	at       time.Time // when the last write about it was sent
}

func (r *recentClaim) seq() uint64 { return r.seqs[len(r.seqs)-1] }

// recentLog holds the recent claims by seq, and the writes in time order
// for pruning.
type recentLog struct {
	mu     sync.Mutex
	bySeq  map[uint64]*recentClaim
	writes []recentWrite
}

type recentWrite struct {
	c  *recentClaim
	at time.Time
}

// wrote records a write about claim seq with ID id sent at at: its claim
// (rec set), confirm or release.
func (l *recentLog) wrote(seq uint64, id, rec string, deadline int64, state string, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.bySeq == nil {
		l.bySeq = map[uint64]*recentClaim{}
	}
	c := l.bySeq[seq]
	if c == nil || c.id != id {
		if rec == "" {
			return // a confirm or release of a claim forgotten, or made by another Index
		}
		c = &recentClaim{seqs: []uint64{seq}, id: id, rec: rec, deadline: deadline}
		l.bySeq[seq] = c
	}
	c.state, c.at = state, at
	l.writes = append(l.writes, recentWrite{c, at})
}

// current returns the seq claim seq of ID id has now: another one when a
// replay wrote it again.
func (l *recentLog) current(seq uint64, id string) (uint64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.bySeq[seq]
	if c == nil || c.id != id {
		return seq, false
	}
	return c.seq(), true
}

// heals reports whether a confirm of claim seq of ID id that found it
// lost may be healed: the claim is remembered and was not released.
func (l *recentLog) heals(seq uint64, id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.bySeq[seq]
	return c != nil && c.id == id && c.state != stateReleased
}

// prune forgets the claims whose last write was sent before t.
func (l *recentLog) prune(t time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := 0
	for ; i < len(l.writes) && l.writes[i].at.Before(t); i++ {
		w := l.writes[i]
		if w.c.at.Equal(w.at) { // its last write: forget it
			for _, s := range w.c.seqs {
				if l.bySeq[s] == w.c { // not a seq given again to a later claim
					delete(l.bySeq, s)
				}
			}
		}
	}
	l.writes = l.writes[i:]
}

// snapshot returns copies of the remembered claims, oldest write first.
func (l *recentLog) snapshot() []recentClaim {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []recentClaim
	for _, w := range l.writes {
		if w.c.at.Equal(w.at) {
			c := *w.c
			c.seqs = []uint64{c.seq()}
			out = append(out, c)
		}
	}
	return out
}

// moved records that a replay gave claim old of ID id the seq seq.
func (l *recentLog) moved(old uint64, id string, seq uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.bySeq[old]
	if c == nil || c.id != id || c.seq() == seq {
		return
	}
	c.seqs = append(c.seqs, seq)
	l.bySeq[seq] = c
}

// healState is an Index's side of the healing: the generation it replayed
// for and the report Heal returns next.
type healState struct {
	mu     sync.Mutex // one replay at a time; guards the fields
	gen    int64
	report contentseen.Healed
	// failed is a replay Claim started and could not finish (the claim
	// itself stood): Heal reports it, and replays again.
	failed error
}

var _ contentseen.Healer = (*Index)(nil)

// Heal implements contentseen.Healer: one round trip when the server did
// not restart (the heal script, which also starts a new generation when it
// did), and then the replay of this Index's recent claims, 256 a round
// trip. The crawler calls it once a second, so that a worker that is not
// claiming replays within the settle window too.
func (x *Index) Heal(ctx context.Context) (contentseen.Healed, error) {
	if x.isClosed() {
		return contentseen.Healed{}, contentseen.ErrClosed
	}
	_, err := x.epochHeal(ctx)
	x.heal.mu.Lock()
	defer x.heal.mu.Unlock()
	if f := x.heal.failed; f != nil {
		x.heal.failed = nil
		if err == nil {
			err = fmt.Errorf("an earlier replay failed: %w", f)
		}
	}
	if err != nil {
		return contentseen.Healed{}, fmt.Errorf("redisindex: heal: %w", err)
	}
	h := x.heal.report
	x.heal.report = contentseen.Healed{}
	return h, nil
}

// epoch runs the heal script: the index's generation on the server now.
func (x *Index) epoch(ctx context.Context) (int64, error) {
	var res []int64
	err := x.retry(ctx, func() error {
		var err error
		res, err = healScript.Run(ctx, x.rdb, x.keys.all, x.settle.Milliseconds(), seqJump).Int64Slice()
		return err
	})
	if err != nil {
		return 0, err
	}
	if len(res) != 3 {
		return 0, fmt.Errorf("%w: heal reply %v", errCorrupt, res)
	}
	return res[0], nil
}

// healTo brings this Index to generation gen, seen by a script sent at
// start: when the server restarted since its last one, it replays its
// recent claims; when not, the claims written keepRecent before start are
// on disk and are forgotten.
func (x *Index) healTo(ctx context.Context, gen int64, start time.Time) error {
	x.heal.mu.Lock()
	defer x.heal.mu.Unlock()
	if gen == x.heal.gen {
		x.recent.prune(start.Add(-keepRecent))
		return nil
	}
	return x.replay(ctx)
}

// replay writes this Index's recent claims again (replayScript), with
// x.heal.mu held, and moves it to the generation the server is at. A
// restart in the middle starts it over.
func (x *Index) replay(ctx context.Context) error {
	cs := x.recent.snapshot()
	for attempt := 0; ; attempt++ {
		gen, rep, err := x.replayOnce(ctx, cs)
		if err != nil {
			return err
		}
		if gen != 0 {
			x.heal.gen = gen
			x.heal.report.Restarts++
			x.heal.report.Replayed += rep.Replayed
			x.heal.report.Late += rep.Late
			return nil
		}
		if attempt == 3 {
			return fmt.Errorf("redisindex: replay: the server restarted %d times meanwhile", attempt+1)
		}
	}
}

// replayOnce sends cs in scripts of replayBatch; gen is 0 when they did not
// all run in one generation.
func (x *Index) replayOnce(ctx context.Context, cs []recentClaim) (int64, contentseen.Healed, error) {
	var gen int64
	var rep contentseen.Healed
	for b := 0; b == 0 || b < len(cs); b += replayBatch {
		part := cs[b:min(len(cs), b+replayBatch)]
		args := make([]any, 0, 2+4*len(part))
		args = append(args, x.settle.Milliseconds(), seqJump)
		for _, c := range part {
			args = append(args, c.state, strconv.FormatUint(c.seq(), 10), c.deadline, c.rec)
		}
		var res []int64
		err := x.retry(ctx, func() error {
			var err error
			res, err = replayScript.Run(ctx, x.rdb, x.keys.all, args...).Int64Slice()
			return err
		})
		if err != nil {
			return 0, rep, fmt.Errorf("redisindex: replay %d recent claims: %w", len(cs), err)
		}
		if len(res) != 3+2*len(part) {
			return 0, rep, fmt.Errorf("redisindex: replay: %w: reply of %d values for %d claims", errCorrupt, len(res), len(part))
		}
		if gen != 0 && res[0] != gen {
			return 0, contentseen.Healed{}, nil
		}
		gen = res[0]
		late := res[2] >= res[1] // the settle window had ended
		for i, c := range part {
			seq, wrote := res[3+2*i], res[4+2*i]
			if seq > 0 {
				x.recent.moved(c.seq(), c.id, uint64(seq))
			}
			if wrote == 1 {
				rep.Replayed++
				if late {
					rep.Late++
				}
			}
		}
	}
	return gen, rep, nil
}

// settleArgs are the ARGV a claiming script passes to settling (its
// settle ms and seq jump), and claimed what its caller does with a claim
// made: every script that inserts a pending entry for a caller goes
// through both, so that no claim is made while the server settles and
// every claim is remembered for a replay.
func (x *Index) settleArgs() []any { return []any{x.settle.Milliseconds(), seqJump} }

// claimed remembers claim seq of ID id (record rec, lease end deadline),
// made in generation gen by a script sent at start, and heals: a
// generation this Index has not replayed for means the server restarted
// and settled without it (a late replay, which it makes now).
func (x *Index) claimed(ctx context.Context, seq uint64, id, rec string, deadline, gen int64, start time.Time) {
	x.recent.wrote(seq, id, rec, deadline, statePending, start)
	if err := x.healTo(ctx, gen, start); err != nil {
		// The claim stands; the replay of the others is Heal's to report
		// and retry (this Index's generation is unchanged).
		x.heal.mu.Lock()
		x.heal.failed = err
		x.heal.mu.Unlock()
	}
}

// ensureGen replays this Index's recent claims unless it did for
// generation gen (a Claim refused while the server settles).
func (x *Index) ensureGen(ctx context.Context, gen int64) error {
	x.heal.mu.Lock()
	defer x.heal.mu.Unlock()
	if gen == x.heal.gen {
		return nil
	}
	return x.replay(ctx)
}

// healLost is called when the confirm of claim seq of ID id found it
// lost: if this Index remembers the claim, it heals (the server may have
// restarted and lost it) and returns the seq to confirm again.
func (x *Index) healLost(ctx context.Context, seq uint64, id string) (uint64, bool, error) {
	if !x.recent.heals(seq, id) {
		return seq, false, nil
	}
	if _, err := x.epochHeal(ctx); err != nil {
		return seq, false, err
	}
	s, _ := x.recent.current(seq, id)
	return s, true, nil
}

// epochHeal is Heal without taking its report.
func (x *Index) epochHeal(ctx context.Context) (int64, error) {
	start := time.Now()
	gen, err := x.epoch(ctx)
	if err != nil {
		return 0, err
	}
	return gen, x.healTo(ctx, gen, start)
}
