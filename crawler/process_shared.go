package crawler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/storage"
)

// waitMargin is added to a pending entry's lease end before a page that
// copies it is judged again: the index's clock may run ahead of ours.
const waitMargin = 250 * time.Millisecond

// commitShared decides p in a distributed crawl (see Distributed): the
// shared index judges it, the worker's own data directory records it, and
// the completion it returns (nil when p needs none, or got it already)
// finishes it in the shared queue (completeShared).
func (c *Crawler) commitShared(ctx context.Context, p *page) (*sharedDone, error) {
	if alias, err := c.sharedAlias(ctx, p); err != nil || alias {
		if alias {
			c.count(p, nil)
		}
		return nil, err
	}
	var stored, dropped bool
	if err := c.db.View(func(tx *bolt.Tx) error {
		_, stored = c.store.URLStoredTx(tx, p.item.URL)
		_, dropped = c.store.DropURLTx(tx, p.item.URL)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("crawler: %w", err)
	}
	switch {
	case stored, dropped:
		// Recorded here by a run that stopped before the queue heard of
		// it (a crash, a lost reply): finish it now, links and all.
		p.urlTaken = true
		return c.later(p, outcomeURLTaken, true, nil), nil
	case p.doc.NoIndex:
		return c.later(p, outcomeNoIndex, !p.doc.NoFollow, nil), nil
	}
	if c.maxPagesReached() {
		c.stopTaking()
		c.stats.held.Add(1) // left in flight: Leave (or the lease) returns it
		return nil, nil
	}
	id := c.dist.nextID.Add(1)
	if p.thin || c.opts.ContentSeenOff {
		return c.storeShared(ctx, p, id, 0)
	}
	e := contentseen.Entry{ID: c.entryID(id), URL: p.item.URL, Fingerprint: p.fp, Digest: p.digest, Sketch: p.sketch}
	start := time.Now()
	v, err := c.judgeShared(ctx, e, p.sketch, c.radius(p))
	p.seenTime += time.Since(start)
	if err != nil {
		return nil, fmt.Errorf("crawler: judge %s: %w", p.item.URL, err)
	}
	switch {
	case v.Copy != nil:
		return c.dropShared(ctx, p, *v.Copy, id, v.Seq)
	case v.Wait != nil:
		wait := max(time.Until(v.Wait.Deadline), 0) + waitMargin
		c.opts.Logger.Debug("waiting for a pending copy", "url", p.item.URL, "copy_of", v.Wait.URL, "after", wait)
		return nil, c.lostLease(c.queue.Retry(ctx, p.item, wait, "a copy of "+v.Wait.URL+", which another worker is storing"), p.item)
	}
	return c.storeShared(ctx, p, id, v.Seq)
}

// maxInlineWait bounds how long judgeShared waits for a pending copy to be
// confirmed or released before the page is queued again (and fetched
// again) for after the copy's lease.
const maxInlineWait = 5 * time.Second

// judgeShared runs contentseen.JudgeClaim for e (contentseen.Judge on an
// index that is no LookupClaimer): a Copy verdict may hold a claim (Seq)
// to release. A copy of a pending entry is usually confirmed within a
// commit's time: it judges again (Rejudge, holding the page's claim, or
// Judge) after short sleeps (10 ms doubling to 500 ms, maxInlineWait in
// all), or as soon as the entry is settled when this worker is storing it
// (claimWaits), so that the page is not fetched twice; a Wait verdict it
// returns (holding no claim) means the entry's worker did not finish in
// that time (it may have died). A claim held when ctx ends expires with
// its lease.
func (c *Crawler) judgeShared(ctx context.Context, e contentseen.Entry, sk contentseen.Sketch, radius int) (contentseen.Verdict, error) {
	isCopy := func(cand contentseen.Entry) bool {
		return c.sharedVerdict(e.Digest, sk, cand, radius) != nil
	}
	lc, claims := c.dist.Index.(contentseen.LookupClaimer)
	start := time.Now()
	sleep := 10 * time.Millisecond
	var v contentseen.Verdict
	var err error
	for round := 0; ; round++ {
		switch {
		case claims && round == 0:
			v, err = contentseen.JudgeClaim(ctx, lc, e, radius, isCopy)
		case claims:
			v, err = contentseen.Rejudge(ctx, lc, e, v, isCopy)
		default:
			v, err = contentseen.Judge(ctx, c.dist.Index, e, isCopy)
		}
		if err != nil || v.Wait == nil {
			return v, err
		}
		if time.Since(start) >= maxInlineWait {
			if v.Seq != 0 {
				if err := c.releaseClaim(ctx, v.Seq, e.ID); err != nil {
					return contentseen.Verdict{}, fmt.Errorf("release the claim of a page waiting for a copy: %w", err)
				}
				v.Seq = 0
			}
			return v, nil
		}
		if round > 0 {
			sleep = min(2*sleep, maxPollSleep)
		}
		var woken <-chan struct{}
		if w, _, err := parseEntryID(v.Wait.ID); err == nil && w == c.dist.Worker {
			woken = c.dist.waits.wait(v.Wait.Seq)
			sleep = maxPollSleep
		}
		t := time.NewTimer(sleep)
		select {
		case <-ctx.Done():
			t.Stop()
			return v, ctx.Err()
		case <-woken:
			t.Stop()
		case <-t.C:
			if woken != nil {
				c.dist.waits.forget(v.Wait.Seq, woken)
			}
		}
	}
}

// maxPollSleep bounds judgeShared's sleeps between two looks at a pending
// entry.
const maxPollSleep = 500 * time.Millisecond

// releaseClaim releases the claim seq with entry ID id and wakes the
// pages waiting for it.
func (c *Crawler) releaseClaim(ctx context.Context, seq uint64, id string) error {
	err := c.dist.Index.Release(ctx, seq, id)
	c.dist.waits.settled(seq)
	return err
}

// sharedVerdict is the single-process judge (judge.go) on a shared entry:
// the same digest, or within radius (the page's, radius) with sketches
// that verify. The shared index looks as far as the crawl's widest radius.
func (c *Crawler) sharedVerdict(digest [16]byte, sk contentseen.Sketch, cand contentseen.Entry, radius int) *verdict {
	if digest != ([16]byte{}) && cand.Digest == digest {
		return &verdict{reason: reasonExact, dist: cand.Distance, res: exactResemblance}
	}
	if cand.Distance > radius {
		return nil
	}
	res := contentseen.Compare(sk, cand.Sketch)
	if !c.thresholds.Verify(res) {
		return nil
	}
	return &verdict{reason: reasonNear, dist: cand.Distance, res: res}
}

// sharedAlias is aliasTx on the shared queue. An alias recorded for this
// very URL by an earlier attempt that stopped before its page was
// recorded does not count.
func (c *Crawler) sharedAlias(ctx context.Context, p *page) (bool, error) {
	if p.finalURL == "" || p.finalURL == p.item.URL {
		return false, nil
	}
	mine := "alias-of:" + p.item.URL
	known, err := c.queue.Alias(ctx, p.finalURL, mine)
	if err != nil {
		return false, fmt.Errorf("crawler: record redirect of %s: %w", p.item.URL, err)
	}
	if known {
		state, err := c.queue.State(ctx, p.finalURL)
		if err != nil {
			return false, fmt.Errorf("crawler: record redirect of %s: %w", p.item.URL, err)
		}
		known = state != "done:"+mine
	}
	if !known {
		return false, nil
	}
	p.alias = true
	outcome := outcomeRedirect + p.finalURL
	err = c.queue.Done(ctx, p.item, outcome)
	if err == nil {
		err = c.recordLocal(ctx, p.item, outcome, false)
	}
	return true, c.lostLease(err, p.item)
}

// dropShared records p (page id, its look-up's claim seq, 0 for none) as
// a copy of the committed entry cand; its completion releases the claim.
func (c *Crawler) dropShared(ctx context.Context, p *page, cand contentseen.Entry, pid, seq uint64) (*sharedDone, error) {
	releaseNow := func(cause error) error {
		if seq == 0 {
			return cause
		}
		if err := c.releaseClaim(ctx, seq, c.entryID(pid)); err != nil {
			return errors.Join(cause, fmt.Errorf("crawler: release claim of %s: %w", p.item.URL, err))
		}
		return cause
	}
	if cand.URL == p.item.URL {
		// The page itself, stored by a worker that stopped before
		// finishing it in the queue.
		p.urlTaken = true
		return c.later(p, outcomeURLTaken, true, nil).releasing(pid, seq), nil
	}
	worker, id, err := parseEntryID(cand.ID)
	if err != nil {
		return nil, releaseNow(err)
	}
	v := c.sharedVerdict(p.digest, p.sketch, cand, c.radius(p))
	if v == nil {
		return nil, releaseNow(fmt.Errorf("crawler: judge %s: %s is no copy on a second look", p.item.URL, cand.ID))
	}
	r := c.dropRecord(p, &storage.Page{ID: id, URL: cand.URL, Fingerprint: uint64(cand.Fingerprint)}, v)
	if worker != c.dist.Worker {
		r.DuplicateOfWorker = worker
	}
	c.commitMu.Lock()
	err = c.db.Update(func(tx *bolt.Tx) error {
		if err := c.deleteConfirmedTx(tx); err != nil {
			return err
		}
		return c.putDropTx(tx, p, r)
	})
	if err == nil {
		err = c.dropLog.Write(*r)
	}
	c.commitMu.Unlock()
	if err != nil {
		return nil, releaseNow(fmt.Errorf("crawler: record %s: %w", p.item.URL, err))
	}
	return c.later(p, dropOutcome(r), p.item.Seed, r).releasing(pid, seq), nil
}

// storeShared stores p as page id with its claim seq (0: not claimed, a
// thin page); its completion confirms the claim.
func (c *Crawler) storeShared(ctx context.Context, p *page, id, seq uint64) (*sharedDone, error) {
	release := func(cause error) error {
		if seq == 0 {
			return cause
		}
		if err := c.releaseClaim(ctx, seq, c.entryID(id)); err != nil {
			return errors.Join(cause, fmt.Errorf("crawler: release claim of %s: %w", p.item.URL, err))
		}
		return cause
	}
	if c.opts.MaxPages > 0 && c.dist.Budget != nil {
		ok, err := c.dist.Budget.ClaimPage(ctx, c.opts.MaxPages)
		if err != nil {
			return nil, release(fmt.Errorf("crawler: claim a page of max_pages: %w", err))
		}
		if !ok {
			c.dist.exhausted.Store(true)
			c.stopTaking()
			c.stats.held.Add(1)
			return nil, release(nil)
		}
	}
	var outcome string
	c.commitMu.Lock()
	err := c.db.Update(func(tx *bolt.Tx) error {
		if err := c.deleteConfirmedTx(tx); err != nil {
			return err
		}
		var err error
		if outcome, err = c.putPageTx(tx, p, id); err != nil {
			return err
		}
		if seq == 0 {
			return nil
		}
		return putClaimTx(tx, id, seq)
	})
	if err == nil {
		c.releaseWritten()
	}
	c.commitMu.Unlock()
	if err != nil {
		err = release(fmt.Errorf("crawler: record %s: %w", p.item.URL, err))
		if c.opts.MaxPages > 0 && c.dist.Budget != nil {
			err = errors.Join(err, c.dist.Budget.ReturnPage(ctx))
		}
		return nil, err
	}
	d := c.later(p, outcome, true, nil)
	d.id, d.seq = id, seq
	return d, nil
}

// confirm confirms the claim seq of stored page id (again: a second
// time, see recheckLoop); a claim lost meanwhile is made again (reclaim).
func (c *Crawler) confirm(ctx context.Context, id, seq uint64, again bool) error {
	return c.confirmed(ctx, id, seq, c.dist.Index.Confirm(ctx, seq, c.entryID(id)), again)
}

// confirmed finishes confirm given the index's answer err.
func (c *Crawler) confirmed(ctx context.Context, id, seq uint64, err error, again bool) error {
	if errors.Is(err, contentseen.ErrLeaseLost) {
		seq, err = c.reclaim(ctx, id)
	}
	if err != nil {
		return fmt.Errorf("crawler: confirm page %d: %w", id, err)
	}
	c.markConfirmed(id, seq, again || seq == 0) // seq 0: a copy holds the entry, nothing to confirm
	return nil
}

// followed returns p's links to queue: none unless follow is set and the
// page allows it.
func (c *Crawler) followed(p *page, follow bool) []frontier.Item {
	if follow && !p.doc.NoFollow {
		return p.links
	}
	return nil
}

// lostLease forgives a completion refused because the URL's lease was
// lost (a shared queue gave it to another worker, which will finish it):
// it is logged, not an error of the crawl.
func (c *Crawler) lostLease(err error, it frontier.Item) error {
	if c.dist != nil && errors.Is(err, frontier.ErrNotInFlight) {
		c.opts.Logger.Warn("url finished by another worker after this one's lease ended", "url", it.URL)
		return nil
	}
	return err
}

// confirmStored confirms the claims of pages stored by an earlier run that
// stopped before confirming them.
func (c *Crawler) confirmStored(ctx context.Context) error {
	claims, err := c.storedClaims()
	if err != nil {
		return fmt.Errorf("crawler: read claims: %w", err)
	}
	ids := make([]uint64, 0, len(claims))
	for id := range claims {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	rs := make([]recheck, len(ids))
	for i, id := range ids {
		rs[i] = recheck{id: id, seq: claims[id]}
	}
	if _, err := c.confirmAgain(ctx, rs); err != nil {
		return err
	}
	if len(ids) > 0 {
		c.opts.Logger.Info("confirmed the claims of pages an earlier run stored", "pages", len(ids))
	}
	return c.flushConfirmed()
}

// reclaim judges and claims again stored page id whose claim was lost (it
// expired before the crash's restart confirmed it). The page stays stored
// whatever the verdict: a copy stored meanwhile by another worker leaves
// two copies, which is logged; a copy dropped for nothing never happens.
func (c *Crawler) reclaim(ctx context.Context, id uint64) (uint64, error) {
	var pg *storage.Page
	var sk contentseen.Sketch
	if err := c.db.View(func(tx *bolt.Tx) error {
		var err error
		if pg, err = c.store.PageHeaderTx(tx, id); err != nil {
			return err
		}
		b, ok := c.store.SketchTx(tx, id)
		if !ok {
			return fmt.Errorf("page %d has no sketch", id)
		}
		return sk.UnmarshalBinary(b)
	}); err != nil {
		return 0, fmt.Errorf("crawler: reclaim page %d: %w", id, err)
	}
	e := contentseen.Entry{ID: c.entryID(id), URL: pg.URL, Fingerprint: contentseen.Fingerprint(pg.Fingerprint), Digest: pg.Digest, Sketch: sk}
	for range maxReclaims {
		// The store does not keep a page's feature count: the radius of
		// a long text (a wider one would only find more pages it is a
		// copy of, and it stays stored either way).
		v, err := c.judgeShared(ctx, e, sk, c.k)
		if err != nil {
			return 0, fmt.Errorf("crawler: reclaim page %d: %w", id, err)
		}
		if v.Copy != nil && v.Seq != 0 {
			// Claimed in the look-up before it was judged a copy.
			if err := c.releaseClaim(ctx, v.Seq, e.ID); err != nil {
				return 0, fmt.Errorf("crawler: reclaim page %d: release: %w", id, err)
			}
		}
		switch {
		case v.Copy != nil && v.Copy.URL == pg.URL:
			return 0, nil // the page itself, claimed again by a worker that fetched it again
		case v.Copy != nil:
			c.opts.Logger.Warn("a stored page lost its claim, and another worker stored a copy of it meanwhile: both stay stored",
				"url", pg.URL, "id", id, "copy", v.Copy.URL, "copy_id", v.Copy.ID)
			return 0, nil
		case v.Wait != nil:
			t := time.NewTimer(max(time.Until(v.Wait.Deadline), 0) + waitMargin)
			select {
			case <-ctx.Done():
				t.Stop()
				return 0, ctx.Err()
			case <-t.C:
			}
			continue
		}
		c.commitMu.Lock()
		err = c.db.Update(func(tx *bolt.Tx) error { return putClaimTx(tx, id, v.Seq) })
		c.commitMu.Unlock()
		if err != nil {
			return 0, fmt.Errorf("crawler: reclaim page %d: %w", id, err)
		}
		err = c.dist.Index.Confirm(ctx, v.Seq, e.ID)
		if !errors.Is(err, contentseen.ErrLeaseLost) {
			return v.Seq, err
		}
	}
	return 0, fmt.Errorf("crawler: reclaim page %d: its claim was lost %d times", id, maxReclaims)
}

// maxReclaims bounds reclaim's attempts.
const maxReclaims = 8

// recordLocal keeps in the worker's own data directory (its bbolt
// frontier, which a distributed worker does not take URLs from) the URLs
// the shared queue recorded as failed (failed set, outcome the reason) or
// skipped (a "skipped:" outcome), so that crawl stats, crawl failed and
// crawl serve list them as they do for a single-process crawl. Other
// outcomes (stored, dropped) are recorded with their pages and drops. It
// does nothing in a single-process crawl, whose queue is that frontier.
func (c *Crawler) recordLocal(ctx context.Context, it frontier.Item, outcome string, failed bool) error {
	if c.dist == nil || !failed && !strings.HasPrefix(outcome, "skipped:") {
		return nil
	}
	if err := c.frontier.Record(context.WithoutCancel(ctx), it, outcome, failed); err != nil {
		return fmt.Errorf("record %s in the data directory: %w", it.URL, err)
	}
	return nil
}
