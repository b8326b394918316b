package redisindex

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/internal/redisconn"
)

// Lookup implements contentseen.Shared. It costs one round trip (the
// lookup script: the token, the entries with the digest and the probed
// buckets) unless a bucket holds a fingerprint within K that is not one
// of those entries, whose entries a second round trip reads.
func (x *Index) Lookup(ctx context.Context, fp contentseen.Fingerprint, d [16]byte) ([]contentseen.Entry, contentseen.Token, error) {
	if x.isClosed() {
		return nil, 0, contentseen.ErrClosed
	}
	bks := x.buckets(fp)
	args := make([]any, 0, 1+len(bks)*(1+len(bks[0])))
	if d == ([16]byte{}) {
		args = append(args, "")
	} else {
		args = append(args, string(d[:]))
	}
	for _, b := range bks {
		args = append(args, len(b))
		args = append(args, b...)
	}
	var res []any
	err := x.retry(ctx, func() error {
		var err error
		res, err = lookupScript.Run(ctx, x.rdb, x.keys.lookup, args...).Slice()
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("redisindex: lookup %s: %w", fp, err)
	}
	// A candidate gone by the second round trip is left out: the Claim
	// that follows checks, atomically, every entry claimed after the
	// token, and a restart in between makes the token stale.
	es, tok, _, err := x.lookupReply(ctx, fp, res, x.opts.K, 0)
	if err != nil {
		return nil, 0, fmt.Errorf("redisindex: lookup %s: %w", fp, err)
	}
	for i := range es {
		es[i].Distance = contentseen.Distance(fp, es[i].Fingerprint)
	}
	contentseen.SortEntries(es)
	return es, tok, nil
}

// lookupReply decodes the lookup script's reply: the live entries with
// the digest, those of the bucket records within K (read with entries),
// and the token: bucket records within k (at most K) of fp, but not
// those of seq below (when not 0) or after (LookupClaim's own entry and
// those claimed after it). vanished is set when an entry of those bucket
// records was no longer live when entries read it, a round trip after
// the script: released or expired, or lost in a restart of the server in
// between and written again under another seq (see LookupClaim).
func (x *Index) lookupReply(ctx context.Context, fp contentseen.Fingerprint, res []any, k int, below uint64) (es []contentseen.Entry, tok contentseen.Token, vanished bool, err error) {
	if len(res) < 3 {
		return nil, 0, false, fmt.Errorf("%w: lookup reply of %d values", errCorrupt, len(res))
	}
	t, ok1 := res[0].(int64)
	now, ok2 := res[1].(int64)
	nd, ok3 := res[2].(int64)
	if !ok1 || !ok2 || !ok3 || nd < 0 || len(res) < 3+3*int(nd) {
		return nil, 0, false, fmt.Errorf("%w: lookup reply %v", errCorrupt, res[:3])
	}
	var out []contentseen.Entry
	known := map[uint64]bool{}
	for i := 3; i < 3+3*int(nd); i += 3 {
		s, ok := res[i].(int64)
		if !ok {
			return nil, 0, false, fmt.Errorf("%w: digest seq %v", errCorrupt, res[i])
		}
		known[uint64(s)] = true
		r, ok := res[i+1].(string)
		if !ok {
			continue
		}
		e, live, err := entryOf(uint64(s), r, res[i+2], now)
		if err != nil {
			return nil, 0, false, err
		}
		if live {
			out = append(out, e)
		}
	}
	var seqs []uint64
	for _, v := range res[3+3*int(nd):] {
		if s, ok := v.(string); ok {
			var err error
			if seqs, err = near(seqs, s, fp, k); err != nil {
				return nil, 0, false, err
			}
		}
	}
	seqs = slices.DeleteFunc(seqs, func(s uint64) bool { return known[s] || below != 0 && s >= below })
	if len(seqs) == 0 {
		return out, contentseen.Token(t), false, nil
	}
	slices.Sort(seqs)
	seqs = slices.Compact(seqs)
	more, err := x.entries(ctx, seqs)
	if err != nil {
		return nil, 0, false, err
	}
	return append(out, more...), contentseen.Token(t), len(more) < len(seqs), nil
}

// entries reads the live entries of seqs (one round trip).
func (x *Index) entries(ctx context.Context, seqs []uint64) ([]contentseen.Entry, error) {
	args := make([]any, len(seqs))
	for i, s := range seqs {
		args[i] = strconv.FormatUint(s, 10)
	}
	var res []any
	err := x.retry(ctx, func() error {
		var err error
		res, err = entriesScript.Run(ctx, x.rdb, []string{x.keys.meta, x.keys.entries, x.keys.pending}, args...).Slice()
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(res) != 1+2*len(seqs) {
		return nil, fmt.Errorf("%w: entries reply of %d values for %d seqs", errCorrupt, len(res), len(seqs))
	}
	now, ok := res[0].(int64)
	if !ok {
		return nil, fmt.Errorf("%w: server time %v", errCorrupt, res[0])
	}
	var out []contentseen.Entry
	for i, s := range seqs {
		r, ok := res[1+2*i].(string)
		if !ok {
			continue // released or purged since the buckets were read
		}
		e, live, err := entryOf(s, r, res[2+2*i], now)
		if err != nil {
			return nil, err
		}
		if live {
			out = append(out, e)
		}
	}
	return out, nil
}

// entryOf decodes entry seq from its record r and lease end dl (nil or
// false: committed), and reports whether it is live at now (ms).
func entryOf(seq uint64, r string, dl any, now int64) (contentseen.Entry, bool, error) {
	e, err := decodeEntry(r)
	if err != nil {
		return e, false, fmt.Errorf("entry %d: %w", seq, err)
	}
	e.Seq = seq
	switch v := dl.(type) {
	case nil:
	case string:
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return e, false, fmt.Errorf("%w: lease end %q of entry %d", errCorrupt, v, seq)
		}
		if ms <= now {
			return e, false, nil // expired, not yet purged
		}
		e.Pending, e.Deadline = true, msTime(ms)
	case int64:
		if v <= now {
			return e, false, nil
		}
		e.Pending, e.Deadline = true, msTime(v)
	default:
		return e, false, fmt.Errorf("%w: lease end %v of entry %d", errCorrupt, dl, seq)
	}
	return e, true, nil
}

// Claim implements contentseen.Shared: one script, one round trip, which
// purges up to 64 expired pending entries, then checks the entries
// claimed after tok (at most MaxLag records read in Redis) and inserts e
// or returns them. Retried after a lost reply, it finds its own entry and
// returns it.
func (x *Index) Claim(ctx context.Context, e contentseen.Entry, tok contentseen.Token) (contentseen.Claimed, error) {
	if x.isClosed() {
		return contentseen.Claimed{}, contentseen.ErrClosed
	}
	if n := len(e.ID) + len(e.URL); n > contentseen.MaxEntryText {
		return contentseen.Claimed{}, fmt.Errorf("redisindex: claim: id and url of %d bytes, more than %d", n, contentseen.MaxEntryText)
	}
	rec := x.encodeEntry(e)
	start := time.Now()
	args := append([]any{uint64(tok), x.opts.K, x.opts.MaxLag, x.leaseM, rec}, x.settleArgs()...)
	var res []any
	err := x.retry(ctx, func() error {
		var err error
		res, err = claimScript.Run(ctx, x.rdb, x.keys.all, args...).Slice()
		return err
	})
	if err != nil {
		return contentseen.Claimed{}, fmt.Errorf("redisindex: claim %s: %w", e.Fingerprint, err)
	}
	if len(res) < 2 {
		return contentseen.Claimed{}, fmt.Errorf("redisindex: claim: %w: reply %v", errCorrupt, res)
	}
	cur, ok := res[1].(int64)
	if !ok {
		return contentseen.Claimed{}, fmt.Errorf("redisindex: claim: %w: reply %v", errCorrupt, res)
	}
	switch res[0] {
	case "settling":
		return contentseen.Claimed{}, x.settling(ctx, res)
	case "ahead":
		return contentseen.Claimed{}, fmt.Errorf("redisindex: claim: token %d ahead of the index (%d claims; redis lost its last writes?): %w",
			tok, cur, contentseen.ErrStaleToken)
	case "stale":
		return contentseen.Claimed{}, fmt.Errorf("redisindex: claim: %d claims since the token: %w", cur-int64(tok), contentseen.ErrStaleToken)
	case "ok":
		dl, ok1 := res[2].(int64)
		gen, ok2 := res[3].(int64)
		if len(res) != 4 || !ok1 || !ok2 {
			return contentseen.Claimed{}, fmt.Errorf("redisindex: claim: %w: reply %v", errCorrupt, res)
		}
		x.claimed(ctx, uint64(cur), e.ID, rec, dl, gen, start)
		return contentseen.Claimed{Seq: uint64(cur), Token: contentseen.Token(cur)}, nil
	case "conflict":
	default:
		return contentseen.Claimed{}, fmt.Errorf("redisindex: claim: %w: reply %v", errCorrupt, res[0])
	}
	if len(res) < 3 {
		return contentseen.Claimed{}, fmt.Errorf("redisindex: claim: %w: conflict reply %v", errCorrupt, res)
	}
	now, ok := res[2].(int64)
	if !ok || (len(res)-3)%3 != 0 {
		return contentseen.Claimed{}, fmt.Errorf("redisindex: claim: %w: conflict reply of %d values", errCorrupt, len(res))
	}
	var cs []contentseen.Entry
	for i := 3; i < len(res); i += 3 {
		s, ok1 := res[i].(int64)
		r, ok2 := res[i+1].(string)
		if !ok1 || !ok2 {
			return contentseen.Claimed{}, fmt.Errorf("redisindex: claim: %w: conflict %v", errCorrupt, res[i])
		}
		c, _, err := entryOf(uint64(s), r, res[i+2], now)
		if err != nil {
			return contentseen.Claimed{}, fmt.Errorf("redisindex: claim: %w", err)
		}
		c.Distance = contentseen.Distance(e.Fingerprint, c.Fingerprint)
		cs = append(cs, c)
	}
	contentseen.SortEntries(cs)
	return contentseen.Claimed{Conflicts: cs, Token: contentseen.Token(cur)}, nil
}

// settling is Claim's answer while the server settles after a restart
// (reply res: 'settling', gen, ms left): this Index replays its own
// recent claims unless it did, waits for the window's end, and returns
// ErrStaleToken, so that the page is looked up again and its copies
// written back by the replays of every worker are seen.
func (x *Index) settling(ctx context.Context, res []any) error {
	gen, ok1 := res[1].(int64)
	left, ok2 := res[2].(int64)
	if len(res) != 3 || !ok1 || !ok2 {
		return fmt.Errorf("redisindex: claim: %w: reply %v", errCorrupt, res)
	}
	if err := x.ensureGen(ctx, gen); err != nil {
		return fmt.Errorf("redisindex: claim: %w", err)
	}
	t := time.NewTimer(time.Duration(left) * time.Millisecond)
	select {
	case <-ctx.Done():
		t.Stop()
		return fmt.Errorf("redisindex: claim: waiting for redis at %s to settle after a restart: %w", x.addr, ctx.Err())
	case <-t.C:
	}
	return fmt.Errorf("redisindex: claim: redis at %s restarted, claims waited %d ms for the workers' replays: %w",
		x.addr, left, contentseen.ErrStaleToken)
}

// Confirm implements contentseen.Shared (one script, one round trip). A
// claim this Index remembers (made in the last seconds) that the server
// lost is written again first (healLost), so a restart that lost a claim
// or its confirm does not lose the page's entry.
func (x *Index) Confirm(ctx context.Context, seq uint64, id string) error {
	seq, _ = x.recent.current(seq, id)
	start := time.Now()
	res, err := x.entryOp(ctx, confirmScript, seq, id)
	if err == nil && res == "lost" {
		var healed bool
		seq, healed, err = x.healLost(ctx, seq, id)
		if healed {
			start = time.Now()
			res, err = x.entryOp(ctx, confirmScript, seq, id)
		}
	}
	if err = confirmReply(seq, res, err); err == nil {
		x.recent.wrote(seq, id, "", 0, stateConfirmed, start)
	}
	return err
}

// confirmReply is Confirm's error for the confirm script's reply res or
// its error err.
func confirmReply(seq uint64, res string, err error) error {
	if err != nil {
		return fmt.Errorf("redisindex: confirm %d: %w", seq, err)
	}
	switch res {
	case "ok":
		return nil
	case "lost":
		return fmt.Errorf("redisindex: confirm %d: %w", seq, contentseen.ErrLeaseLost)
	}
	return fmt.Errorf("redisindex: confirm %d: %w: reply %q", seq, errCorrupt, res)
}

// ConfirmOn queues the confirm of claim seq with ID id on pipe, for the
// caller to send with its own commands (one round trip for all; see
// redisfrontier.Frontier.FinishWith), and returns what gives Confirm's
// answer once pipe was sent. It is not retried: a pipeline cut by an
// unreachable server is the caller's to send again (Confirm is
// idempotent). pipe must be of Client.
func (x *Index) ConfirmOn(ctx context.Context, pipe redis.Pipeliner, seq uint64, id string) func() error {
	if x.isClosed() {
		return func() error { return confirmReply(seq, "", contentseen.ErrClosed) }
	}
	seq, _ = x.recent.current(seq, id)
	start := time.Now()
	cmd := confirmScript.EvalSha(ctx, pipe, x.keys.all, strconv.FormatUint(seq, 10), id)
	return func() error {
		res, err := cmd.Text()
		if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") || err == nil && res == "lost" && x.recent.heals(seq, id) {
			// The server lost its scripts (Confirm loads it), or the
			// claim (Confirm heals it).
			return x.Confirm(ctx, seq, id)
		}
		if err = confirmReply(seq, res, x.lost(err)); err == nil {
			x.recent.wrote(seq, id, "", 0, stateConfirmed, start)
		}
		return err
	}
}

// Client returns the client the index runs on (see ConfirmOn).
func (x *Index) Client() redis.UniversalClient { return x.rdb }

// confirmPerPipe bounds the confirm scripts of one pipelined round trip
// of ConfirmBatch (each is small; the replies must come within the
// client's read timeout).
const confirmPerPipe = 512

// ConfirmBatch implements contentseen.BatchConfirmer: the confirm scripts
// of claims go in one pipelined round trip (one per 512 claims), each
// atomic on its own, with Confirm's answer for each. A pipeline cut by an
// unreachable server is sent again whole, as Confirm is idempotent; a
// claim whose script the server no longer has (restarted) is confirmed
// alone, which loads it.
func (x *Index) ConfirmBatch(ctx context.Context, claims []contentseen.ClaimRef) []error {
	errs := make([]error, len(claims))
	for b := 0; b < len(claims); b += confirmPerPipe {
		part := claims[b:min(len(claims), b+confirmPerPipe)]
		x.confirmPipe(ctx, part, errs[b:b+len(part)])
	}
	return errs
}

func (x *Index) confirmPipe(ctx context.Context, claims []contentseen.ClaimRef, errs []error) {
	if x.isClosed() {
		for i, c := range claims {
			errs[i] = confirmReply(c.Seq, "", contentseen.ErrClosed)
		}
		return
	}
	seqs := make([]uint64, len(claims))
	for i, c := range claims {
		seqs[i], _ = x.recent.current(c.Seq, c.ID)
	}
	start := time.Now()
	var cmds []*redis.Cmd
	err := x.retry(ctx, func() error {
		pipe := x.rdb.Pipeline()
		cmds = make([]*redis.Cmd, len(claims))
		for i, c := range claims {
			cmds[i] = confirmScript.EvalSha(ctx, pipe, x.keys.all, strconv.FormatUint(seqs[i], 10), c.ID)
		}
		_, err := pipe.Exec(ctx)
		if err != nil && redisconn.Transient(err) {
			return err // the connection failed: no reply is known, send them all again
		}
		return nil // each script's own error is its claim's (below)
	})
	for i, c := range claims {
		if err != nil {
			errs[i] = confirmReply(c.Seq, "", err)
			continue
		}
		res, cerr := cmds[i].Text()
		if cerr != nil && redis.HasErrorPrefix(cerr, "NOSCRIPT") || cerr == nil && res == "lost" && x.recent.heals(seqs[i], c.ID) {
			errs[i] = x.Confirm(ctx, c.Seq, c.ID) // loads the script, or heals the claim
			continue
		}
		if errs[i] = confirmReply(c.Seq, res, x.lost(cerr)); errs[i] == nil {
			x.recent.wrote(seqs[i], c.ID, "", 0, stateConfirmed, start)
		}
	}
}

// Release implements contentseen.Shared (one script, one round trip).
func (x *Index) Release(ctx context.Context, seq uint64, id string) error {
	seq, _ = x.recent.current(seq, id)
	start := time.Now()
	res, err := x.entryOp(ctx, releaseScript, seq, id)
	if err = releaseReply(seq, res, err); err == nil {
		x.recent.wrote(seq, id, "", 0, stateReleased, start)
	}
	return err
}

// releaseReply is Release's error for the release script's reply res or
// its error err.
func releaseReply(seq uint64, res string, err error) error {
	if err != nil {
		return fmt.Errorf("redisindex: release %d: %w", seq, err)
	}
	switch res {
	case "ok":
		return nil
	case "committed":
		return fmt.Errorf("redisindex: release %d: %w", seq, contentseen.ErrCommitted)
	}
	return fmt.Errorf("redisindex: release %d: %w: reply %q", seq, errCorrupt, res)
}

func (x *Index) entryOp(ctx context.Context, s *redis.Script, seq uint64, id string) (string, error) {
	if x.isClosed() {
		return "", contentseen.ErrClosed
	}
	var res string
	err := x.retry(ctx, func() error {
		var err error
		res, err = s.Run(ctx, x.rdb, x.keys.all, strconv.FormatUint(seq, 10), id).Text()
		return err
	})
	return res, err
}

// Load's sizes: entries per script (a script blocks the server while it
// runs, a few ms for 256) and scripts per pipeline (a pipeline's replies
// must come within the client's read timeout, 3 s by default: 16 scripts
// of 512 took longer on a machine at load 28).
const (
	loadBatch   = 256
	loadPerPipe = 4
)

// Load inserts es as committed entries without looking (their Seq,
// Pending, Deadline and Distance ignored), for benchmarks, tests and a
// migration of a single-machine index: scripts of 256 entries, 4 of them
// per pipelined round trip. It writes the keys Claim and Confirm would
// for the same entries in the same order, byte for byte (seqs given in
// order). It is not atomic as a whole; each script is. Redis's CPU bounds
// it, and each insert rewrites its buckets: 17.5 µs of Redis CPU an entry
// at 1M on 4x16, 43.7 at 10M (see the package doc).
func (x *Index) Load(ctx context.Context, es []contentseen.Entry) error {
	if x.isClosed() {
		return contentseen.ErrClosed
	}
	for _, e := range es {
		if n := len(e.ID) + len(e.URL); n > contentseen.MaxEntryText {
			return fmt.Errorf("redisindex: load: id and url of %d bytes, more than %d", n, contentseen.MaxEntryText)
		}
	}
	if err := loadScript.Load(ctx, x.rdb).Err(); err != nil {
		return fmt.Errorf("redisindex: load script into redis at %s: %w", x.addr, err)
	}
	const perPipe = loadPerPipe * loadBatch
	for len(es) > 0 {
		chunk := es[:min(len(es), perPipe)]
		es = es[len(chunk):]
		// Not retried: a pipeline cut in the middle may have inserted part
		// of the chunk, and entries loaded twice would be two entries.
		pipe := x.rdb.Pipeline()
		for b := 0; b < len(chunk); b += loadBatch {
			part := chunk[b:min(len(chunk), b+loadBatch)]
			args := make([]any, len(part))
			for i, e := range part {
				args[i] = x.encodeEntry(e)
			}
			loadScript.EvalSha(ctx, pipe, x.keys.all, args...)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return fmt.Errorf("redisindex: load into redis at %s: %w", x.addr, x.lost(err))
		}
	}
	return nil
}

func be64(s string) uint64 {
	var v uint64
	for i := range 8 {
		v = v<<8 | uint64(s[i])
	}
	return v
}
