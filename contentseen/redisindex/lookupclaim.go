package redisindex

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/contentseen"
)

var _ contentseen.LookupClaimer = (*Index)(nil)

// LookupClaim implements contentseen.LookupClaimer: one script, one round
// trip, which reads what Lookup reads and inserts e as pending unless a
// live entry has its digest, atomically. As with Lookup, the entries of
// bucket records within radius that are not the digest's are read with a
// second round trip (a near copy, or a page on the same template). The
// script computes no distance: every page not an exact copy is claimed,
// and a near copy's claim is released by the caller (ReleaseOn rides with
// the frontier's Finish), so the look-up costs Redis no more than Lookup
// and a Claim.
//
// The second round trip is not atomic with the claim: when an entry the
// script found within radius is no longer live when it is read (released,
// expired, or lost in a Redis restart between the two and written again
// under another seq by its worker's replay), the claim is released and
// LookupClaim returns ErrStaleToken, so that the page is looked up again
// (after the settle window, when the server restarted) instead of being
// judged on candidates the server no longer holds.
func (x *Index) LookupClaim(ctx context.Context, e contentseen.Entry, radius int) (contentseen.LookupClaimed, error) {
	if x.isClosed() {
		return contentseen.LookupClaimed{}, contentseen.ErrClosed
	}
	if n := len(e.ID) + len(e.URL); n > contentseen.MaxEntryText {
		return contentseen.LookupClaimed{}, fmt.Errorf("redisindex: claim: id and url of %d bytes, more than %d", n, contentseen.MaxEntryText)
	}
	bks := x.buckets(e.Fingerprint)
	rec := x.encodeEntry(e)
	args := make([]any, 0, 4+len(bks)*(1+len(bks[0])))
	args = append(args, x.leaseM, rec)
	args = append(args, x.settleArgs()...)
	for _, b := range bks {
		args = append(args, len(b))
		args = append(args, b...)
	}
	start := time.Now()
	var res []any
	err := x.retry(ctx, func() error {
		var err error
		res, err = lookupClaimScript.Run(ctx, x.rdb, x.keys.all, args...).Slice()
		return err
	})
	if err != nil {
		return contentseen.LookupClaimed{}, fmt.Errorf("redisindex: look up and claim %s: %w", e.Fingerprint, err)
	}
	if len(res) > 0 && res[0] == "settling" {
		// Redis restarted: this Index replays its recent claims, waits
		// for the others' and returns ErrStaleToken (look up again).
		return contentseen.LookupClaimed{}, x.settling(ctx, res)
	}
	if len(res) < 4 {
		return contentseen.LookupClaimed{}, fmt.Errorf("redisindex: look up and claim %s: %w: reply of %d values", e.Fingerprint, errCorrupt, len(res))
	}
	status, ok1 := res[0].(string)
	seq, ok2 := res[1].(int64)
	dl, ok3 := res[2].(int64)
	gen, ok4 := res[3].(int64)
	if !ok1 || !ok2 || !ok3 || !ok4 || seq < 0 || (status == "exact") != (seq == 0) {
		return contentseen.LookupClaimed{}, fmt.Errorf("redisindex: look up and claim %s: %w: reply %v", e.Fingerprint, errCorrupt, res[:4])
	}
	if seq != 0 {
		x.claimed(ctx, uint64(seq), e.ID, rec, dl, gen, start) // remembered for a replay after a restart
	}
	// A replayed claim's candidates are those claimed before it.
	es, tok, vanished, err := x.lookupReply(ctx, e.Fingerprint, res[4:], min(max(radius, 0), x.opts.K), uint64(seq))
	if err != nil {
		return contentseen.LookupClaimed{}, fmt.Errorf("redisindex: look up and claim %s: %w", e.Fingerprint, err)
	}
	if vanished && seq != 0 {
		// A near candidate was gone when its entry was read: released,
		// or lost in a restart between the two round trips and written
		// again by its worker under another seq, which this look-up did
		// not see. The claim stands on what the script saw, so it is
		// released and the page looked up again (a look-up that claimed
		// nothing claims with the token, which checks atomically).
		if err := x.Release(ctx, uint64(seq), e.ID); err != nil {
			return contentseen.LookupClaimed{}, fmt.Errorf("redisindex: look up and claim %s: a candidate vanished: %w", e.Fingerprint, err)
		}
		return contentseen.LookupClaimed{}, fmt.Errorf("redisindex: look up and claim %s: a candidate was gone when its entry was read, look up again: %w",
			e.Fingerprint, contentseen.ErrStaleToken)
	}
	for i := range es {
		es[i].Distance = contentseen.Distance(e.Fingerprint, es[i].Fingerprint)
	}
	contentseen.SortEntries(es)
	return contentseen.LookupClaimed{Candidates: es, Seq: uint64(seq), Token: tok}, nil
}

// Entries implements contentseen.LookupClaimer: one script, one round
// trip.
func (x *Index) Entries(ctx context.Context, seqs []uint64) ([]contentseen.Entry, error) {
	if x.isClosed() {
		return nil, contentseen.ErrClosed
	}
	seqs = slices.Compact(slices.Sorted(slices.Values(seqs)))
	if len(seqs) == 0 {
		return nil, nil
	}
	es, err := x.entries(ctx, seqs)
	if err != nil {
		return nil, fmt.Errorf("redisindex: entries: %w", err)
	}
	return es, nil
}

// ReleaseOn queues the release of claim seq with ID id on pipe, as
// ConfirmOn queues a confirm, and returns what gives Release's answer
// once pipe was sent.
func (x *Index) ReleaseOn(ctx context.Context, pipe redis.Pipeliner, seq uint64, id string) func() error {
	if x.isClosed() {
		return func() error { return fmt.Errorf("redisindex: release %d: %w", seq, contentseen.ErrClosed) }
	}
	seq, _ = x.recent.current(seq, id)
	start := time.Now()
	cmd := releaseScript.EvalSha(ctx, pipe, x.keys.all, strconv.FormatUint(seq, 10), id)
	return func() error {
		res, err := cmd.Text()
		if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			return x.Release(ctx, seq, id) // the server lost its scripts: Release loads it
		}
		if err = releaseReply(seq, res, x.lost(err)); err == nil {
			x.recent.wrote(seq, id, "", 0, stateReleased, start)
		}
		return err
	}
}

// lookupClaimScript is lookupScript and claimScript's insert in one step.
// KEYS: keys.all; ARGV: lease ms, the entry's record, settle ms and seq
// jump (settleArgs), then per table the number of buckets and their
// names. It returns
//
//	{status, seq, lease end, generation, then what lookupScript returns: token, now ms, n, n times (seq, record, lease end or false), bucket value or false...}
//
// with status 'new' (inserted as seq), 'exact' (a live entry has the
// digest: nothing inserted, seq 0) or 'replay' (this call ran before and
// its reply was lost: its pending entry is seq, and the digest's entries
// leave it out). The buckets are read before the insert. While the
// server settles after a restart it claims nothing and returns what
// claimScript returns then ({'settling', generation, ms left}).
var lookupClaimScript = newScript(prelude + `
local t = now()
local refuse, gen = settling(t, 3)
if refuse then return refuse end
purge(t)
local LEASE, r = tonumber(ARGV[1]), ARGV[2]
local d = digest(r)
-- own: this call's pending entry, when it ran before (the same record,
-- ID included, in the fingerprint's bucket of table 1)
local own, ownDL
local v = redis.call('HGET', KEYS[6], bucketof(r, 1))
if v then
  local fp, from = string.sub(r, 2, 9), 1
  while not own do
    local p = string.find(v, fp, from, true)
    if not p then break end
    if (p - 1) % 16 == 0 then
      local hi, lo = struct.unpack('>I4I4', v, p + 8)
      local s = num(hi * 4294967296 + lo)
      local dl = redis.call('ZSCORE', PEND, s)
      if dl and tonumber(dl) > t and redis.call('HGET', E, s) == r then own, ownDL = s, tonumber(dl) end
    end
    from = p + 1
  end
end
local out = {'new', 0, 0, gen, tonumber(redis.call('GET', SEQ) or '0'), t, 0}
local exact = false
if d ~= ZERO then
  local dv = redis.call('HGET', D, d)
  if dv then
    for i = 1, #dv, 8 do
      local hi, lo = struct.unpack('>I4I4', dv, i)
      local s = num(hi * 4294967296 + lo)
      if s ~= own then
        local c = redis.call('HGET', E, s)
        local dl = redis.call('ZSCORE', PEND, s)
        out[#out + 1] = hi * 4294967296 + lo
        out[#out + 1] = c
        out[#out + 1] = dl
        out[7] = out[7] + 1
        if c and (not dl or tonumber(dl) > t) then exact = true end
      end
    end
  end
end
local at = 5
for k = 6, #KEYS do
  local n = tonumber(ARGV[at])
  local vs = redis.call('HMGET', KEYS[k], unpack(ARGV, at + 1, at + n))
  for i = 1, n do out[#out + 1] = vs[i] end
  at = at + n + 1
end
if own then
  out[1], out[2], out[3] = 'replay', tonumber(own), ownDL
elseif exact then
  out[1] = 'exact'
else
  local seq = redis.call('INCR', SEQ)
  insert(seq, r, t + LEASE)
  out[2], out[3] = seq, t + LEASE
end
return out
`)
