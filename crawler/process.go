package crawler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/extract"
	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/storage"
)

// Outcomes recorded in the frontier for each finished URL.
const (
	outcomeStored   = "stored"
	outcomeThin     = "stored:thin"
	outcomeExact    = "dropped:exact"
	outcomeNear     = "dropped:near"
	outcomeNonHTML  = "skipped:non-html"
	outcomeNoIndex  = "skipped:noindex"
	outcomeRobots   = "skipped:robots"
	outcomeScope    = "skipped:redirect-out-of-scope"
	outcomeRedirect = "skipped:redirect-to:"
	reasonExact     = "exact"
	reasonNear      = "near"
	maxRetryBackoff = 10 * time.Minute
	longRetryWait   = 30 * time.Second // retries waiting this long are logged at info
)

// process fetches one URL and records its outcome. It returns an error only
// for failures of the crawl itself (the store); a bad page is an outcome.
func (c *Crawler) process(ctx context.Context, it frontier.Item) error {
	if err := c.applyCrawlDelay(ctx, it.URL); err != nil {
		// robots.txt could not be read: Fetch would ask for it again and
		// fail the same way, so a 5xx robots.txt is requested once per
		// attempt.
		return c.fetchFailed(ctx, it, err)
	}

	fetched := c.metrics.fetching(frontier.HostKey(it.URL))
	resp, err := c.fetcher.Fetch(WithRedirectScope(ctx, func(u *url.URL) (bool, string) {
		return c.scope.get().AllowsRedirect(u, it.Depth == 0)
	}), it.URL)
	fetched()
	if err != nil {
		return c.fetchFailed(ctx, it, err)
	}
	c.stats.fetched.Add(1)
	c.opts.Logger.Debug("fetched", "url", it.URL, "status", resp.Status, "bytes", len(resp.Body), "final_url", resp.FinalURL)
	if it.Depth == 0 && resp.FinalURL != it.URL {
		if err := c.seedAnswered(ctx, it.URL, resp.FinalURL); err != nil {
			return err
		}
	}
	p := &page{item: it, resp: resp}
	outcome, failure := c.examine(p)
	switch {
	case failure != "":
		c.countError(failureKind(failure))
		return c.fail(ctx, it, failure)
	case outcome != "":
		return c.done(ctx, it, outcome)
	}
	if c.dist != nil {
		return c.commitShared(ctx, p)
	}
	return c.commit(p)
}

// examine extracts (unless p.doc is set) and fingerprints p. It returns an
// outcome when p is not a page to judge (not HTML), or a failure reason;
// both empty means p is ready for commit. Fetched pages and dedup records
// (Dedup) share it.
func (c *Crawler) examine(p *page) (outcome, failure string) {
	if p.doc == nil {
		// A fetched page's final URL must be one the frontier can mark
		// seen and the store can key (a redirect may point anywhere, 40 KB
		// long); dedup records (file:// keys too) only need the length.
		if len(p.resp.FinalURL) > frontier.MaxURLLength {
			return "", fmt.Sprintf("bad final url: longer than %d bytes", frontier.MaxURLLength)
		}
		if p.record == nil {
			var err error
			if p.finalURL, err = frontier.Canonical(p.resp.FinalURL); err != nil {
				return "", "bad final url: " + err.Error()
			}
		}
		final, err := url.Parse(p.resp.FinalURL)
		if err != nil {
			return "", "bad final url: " + err.Error()
		}
		doc, err := extract.ExtractBytes(p.resp.Body, p.resp.ContentType, final,
			extract.Options{MaxBodySize: c.fetcher.opts.MaxBodySize, XRobotsTag: p.resp.Header.Get("X-Robots-Tag")})
		if errors.Is(err, extract.ErrNotHTML) {
			p.notHTML = err.Error()
			if p.record == nil { // a dedup record is counted when decided
				c.skip(skipNonHTML)
				c.logSkip(p, p.notHTML)
			}
			return outcomeNonHTML, ""
		}
		if err != nil {
			return "", "extract: " + err.Error()
		}
		p.doc = doc
	}
	if p.record == nil {
		p.links = c.followable(p.item, p.doc)
	}
	if c.opts.ContentSeenOff {
		return "", ""
	}
	var err error
	start := time.Now()
	defer func() { p.seenTime += time.Since(start) }()
	// The judge sees the text without the page's own headline: a
	// retitled copy is a copy (contentseen.StripTitle).
	text := contentseen.StripTitle(p.doc.Text, p.doc.Title)
	p.fp, p.features, p.sketch, err = c.fper.FingerprintSketch(text)
	switch {
	case errors.Is(err, contentseen.ErrNotEnoughContent):
		p.thin = true
	case err != nil:
		return "", "fingerprint: " + err.Error()
	default:
		p.digest = contentseen.TextDigest(text)
	}
	return "", ""
}

// page is everything known about a fetched page when its outcome is
// decided.
type page struct {
	item     frontier.Item
	resp     *Response
	doc      *extract.Document
	fp       contentseen.Fingerprint
	features int
	thin     bool
	digest   [16]byte // contentseen.TextDigest; zero for thin pages: they never match each other
	sketch   contentseen.Sketch
	links    []frontier.Item
	alias    bool          // a redirect to a URL the crawl knows on its own
	urlTaken bool          // the store already holds a page under this URL
	finalURL string        // canonical final URL of a fetched page ("" for dedup records)
	seenTime time.Duration // spent fingerprinting and looking for duplicates
	notHTML  string        // why extraction found no HTML, when it did not
	// record, when set, records the outcome instead of the frontier: a
	// dedup record (Dedup) is not a frontier URL and has no links to queue.
	record func(tx *bolt.Tx, outcome string) error
}

// commit decides whether p is a duplicate and records the outcome in the
// store, the index, the frontier and the drop log in one transaction, so
// that "stored" and "indexed" never disagree after a crash. A page past
// MaxPages is left undecided for a later run and counted as held.
func (c *Crawler) commit(p *page) error {
	err := c.commitOrHold(p)
	if errors.Is(err, errMaxPages) {
		c.stats.held.Add(1)
		return nil
	}
	return err
}

// commitOrHold is commit, returning errMaxPages for a page it left
// undecided because MaxPages pages are stored.
func (c *Crawler) commitOrHold(p *page) error {
	// bbolt has one writer at a time, so holding commitMu across the
	// transaction and the drop-log write costs nothing; it keeps the log in
	// commit order and the stored count exact for MaxPages.
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	var dropped *storage.DropRecord
	err := c.db.Update(func(tx *bolt.Tx) error {
		dropped, p.alias, p.urlTaken = nil, false, false
		if alias, err := c.aliasTx(tx, p); err != nil || alias {
			p.alias = alias
			return err
		}
		if _, ok := c.store.URLStoredTx(tx, p.item.URL); ok {
			// Stored by an earlier dedup run into this directory: the
			// store keeps one page per URL, and a page is no duplicate of
			// itself.
			if p.record != nil {
				return fmt.Errorf("%s: %w", p.item.URL, storage.ErrExists) // commitRecord maps it
			}
			p.urlTaken = true
			return c.finishTx(tx, p, outcomeURLTaken, false)
		}
		if p.doc.NoIndex {
			return c.finishTx(tx, p, outcomeNoIndex, !p.doc.NoFollow)
		}
		if c.maxPagesReached() {
			c.stopTaking()
			// Leave it pending for a later run with a larger limit.
			return errMaxPages
		}
		if !p.thin && !c.opts.ContentSeenOff {
			start := time.Now()
			d, err := c.findDuplicate(tx, p)
			p.seenTime += time.Since(start)
			if err != nil {
				return err
			}
			if d != nil {
				dropped = d
				return c.dropTx(tx, p, d)
			}
		}
		return c.storeTx(tx, p)
	})
	if errors.Is(err, errMaxPages) {
		return err
	}
	if err != nil {
		return fmt.Errorf("crawler: record %s: %w", p.item.URL, err)
	}
	c.releaseWritten()
	if dropped != nil {
		// Written right after the commit that records the drop, so a
		// failed commit leaves no line behind; a crash in between leaves
		// the line missing, and the next Open restores it from the store
		// (reconcileDropLog), which the commit order of the log allows.
		if err := c.dropLog.Write(*dropped); err != nil {
			return fmt.Errorf("crawler: drop log: %w", err)
		}
	}
	c.count(p, dropped)
	return nil
}

var errMaxPages = errors.New("crawler: max pages reached")

// aliasTx handles a redirect. The final URL, canonical, is recorded in the
// frontier so that it is never queued or fetched again. If the crawl knew
// it already (queued, fetched or failed on its own), the page is only an
// alias of that URL: it is marked done as such and not judged, so a page is
// never stored twice or logged as a duplicate of its own redirect target.
func (c *Crawler) aliasTx(tx *bolt.Tx, p *page) (bool, error) {
	if p.finalURL == "" || p.finalURL == p.item.URL {
		return false, nil // not redirected, or a dedup record
	}
	known, err := c.frontier.AliasTx(tx, p.finalURL, "alias-of:"+p.item.URL)
	if err != nil || !known {
		return false, err
	}
	return true, c.frontier.DoneTx(tx, p.item, outcomeRedirect+p.finalURL)
}

// maxPagesReached reports whether MaxPages pages are stored, counting the
// pages of earlier runs on the same data directory.
func (c *Crawler) maxPagesReached() bool {
	if c.dist != nil && c.dist.Budget != nil {
		return c.dist.exhausted.Load() // the crawl's budget, shared by its workers
	}
	return c.opts.MaxPages > 0 && c.storedBefore+c.stats.stored.Load() >= int64(c.opts.MaxPages)
}

// findDuplicate looks for an exact copy (same text digest) and then for a
// stored page within the candidate radius whose sketch verifies it
// (judgeTx). It returns nil when p is new.
func (c *Crawler) findDuplicate(tx *bolt.Tx, p *page) (*storage.DropRecord, error) {
	v, err := c.judgeTx(tx, p)
	if err != nil || v == nil {
		return nil, err
	}
	orig := v.orig
	if orig == nil {
		if orig, err = c.store.PageHeaderTx(tx, v.id); err != nil {
			return nil, fmt.Errorf("%s match %d: %w", v.reason, v.id, err)
		}
	}
	return c.dropRecord(p, orig, v), nil
}

func (c *Crawler) dropRecord(p *page, orig *storage.Page, v *verdict) *storage.DropRecord {
	return &storage.DropRecord{
		Time:               p.resp.FetchedAt,
		URL:                p.item.URL,
		FinalURL:           p.resp.FinalURL,
		DuplicateOf:        orig.URL,
		DuplicateOfID:      orig.ID,
		Distance:           v.dist,
		Reason:             v.reason,
		Fingerprint:        uint64(p.fp),
		MatchedFingerprint: orig.Fingerprint,
		Title:              p.doc.Title,
		Depth:              p.item.Depth,
		Similarity:         v.res.Similarity,
		Containment:        v.res.Containment,
	}
}

// dropTx records a duplicate: kept in the store's drop list (with its text,
// for `crawl dups show`; commit then writes the drop-log line), links
// followed only for seeds (a user listed them on purpose).
func (c *Crawler) dropTx(tx *bolt.Tx, p *page, r *storage.DropRecord) error {
	if err := c.putDropTx(tx, p, r); err != nil {
		return err
	}
	return c.finishTx(tx, p, dropOutcome(r), p.item.Seed)
}

// putDropTx records drop r of p in the store.
func (c *Crawler) putDropTx(tx *bolt.Tx, p *page, r *storage.DropRecord) error {
	d := &storage.Drop{
		URL: r.URL, FinalURL: r.FinalURL, Title: r.Title, Depth: r.Depth, FetchedAt: r.Time,
		DuplicateOf: r.DuplicateOfID, Distance: r.Distance, Reason: r.Reason,
		Fingerprint: r.Fingerprint, MatchedFingerprint: r.MatchedFingerprint, Text: p.doc.Text,
		Similarity: r.Similarity, Containment: r.Containment,
	}
	if r.DuplicateOfWorker != "" {
		d.DuplicateOfWorker, d.DuplicateOfURL = r.DuplicateOfWorker, r.DuplicateOf
	}
	return c.store.PutDropTx(tx, d)
}

// dropOutcome is the frontier outcome of drop r.
func dropOutcome(r *storage.DropRecord) string {
	if r.Reason == reasonExact {
		return outcomeExact
	}
	return outcomeNear
}

func (c *Crawler) storeTx(tx *bolt.Tx, p *page) error {
	outcome, err := c.putPageTx(tx, p, 0)
	if err != nil {
		return err
	}
	return c.finishTx(tx, p, outcome, true)
}

// putPageTx stores p under id (0: the store's next) with its sketch, adds
// it to the index unless it is thin, and returns the page's outcome.
func (c *Crawler) putPageTx(tx *bolt.Tx, p *page, id uint64) (string, error) {
	sp := &storage.Page{ID: id,
		URL: p.item.URL, FinalURL: p.resp.FinalURL, Status: p.resp.Status,
		ContentType: p.resp.ContentType, FetchedAt: p.resp.FetchedAt, Depth: p.item.Depth,
		Title: p.doc.Title, Text: p.doc.Text, Lang: p.doc.Lang,
		Fingerprint: uint64(p.fp), Thin: p.thin, Digest: p.digest,
		Body: p.resp.Body, Header: p.resp.Header, Truncated: p.resp.Truncated || p.doc.Truncated,
	}
	if !p.thin && !c.opts.ContentSeenOff {
		sk, err := p.sketch.MarshalBinary()
		if err != nil {
			return "", err
		}
		sp.Sketch = sk
	}
	id, err := c.store.PutTx(tx, sp)
	if err != nil {
		return "", err
	}
	switch {
	case p.thin:
		return outcomeThin, nil
	case c.opts.ContentSeenOff:
	default:
		if err := c.index.AddTx(tx, id, p.fp); err != nil {
			return "", err
		}
	}
	return outcomeStored, nil
}

// finishTx marks the URL done and, when follow is set and the page allows
// it, queues its links.
func (c *Crawler) finishTx(tx *bolt.Tx, p *page, outcome string, follow bool) error {
	if p.record != nil {
		return p.record(tx, outcome)
	}
	if follow && !p.doc.NoFollow && len(p.links) > 0 {
		if _, err := c.frontier.AddTx(tx, p.links...); err != nil {
			return err
		}
	}
	return c.frontier.DoneTx(tx, p.item, outcome)
}

// logSkip logs that p was skipped for reason: at info for a dedup record,
// where each input record is the user's to account for, at debug for a
// crawled page (a crawl skips many, and counts them by reason in metrics).
func (c *Crawler) logSkip(p *page, reason string) {
	level := slog.LevelDebug
	if p.record != nil {
		level = slog.LevelInfo
	}
	c.opts.Logger.Log(context.Background(), level, "skipped", "url", p.item.URL, "reason", reason)
}

func (c *Crawler) count(p *page, d *storage.DropRecord) {
	switch {
	case p.alias:
		c.skip(skipRedirect)
		c.logSkip(p, "a redirect to "+p.finalURL+", which the crawl knows on its own")
		return
	case p.urlTaken:
		c.skip(skipURLStored)
		c.logSkip(p, "the store already holds a page under this url")
		return
	case d != nil && d.Reason == reasonExact:
		c.stats.exact.Add(1)
	case d != nil:
		c.stats.near.Add(1)
	case p.doc.NoIndex:
		c.skip(skipNoIndex)
		c.logSkip(p, "noindex: the page asks not to be indexed (robots meta or X-Robots-Tag)")
	case p.thin:
		c.stats.stored.Add(1)
		c.stats.thin.Add(1)
		c.opts.Logger.Debug("stored", "url", p.item.URL, "thin", true, "features", p.features, "links", len(p.links))
	default:
		c.stats.stored.Add(1)
		c.opts.Logger.Debug("stored", "url", p.item.URL, "fingerprint", p.fp.String(), "features", p.features, "links", len(p.links))
	}
	if p.seenTime > 0 {
		c.metrics.contentSeen.Observe(p.seenTime.Seconds())
	}
	if d != nil {
		c.opts.Logger.Info("dropped duplicate", "url", d.URL, "duplicate_of", d.DuplicateOf,
			"distance", d.Distance, "reason", d.Reason)
	}
}

// followable returns the page's links that the crawl may follow: in
// scope, not too deep, canonical.
func (c *Crawler) followable(it frontier.Item, doc *extract.Document) []frontier.Item {
	if doc.NoFollow || it.Depth+1 > c.opts.MaxDepth {
		return nil
	}
	seen := make(map[string]bool, len(doc.Links))
	scope := c.scope.get() // once per page, not per link
	var out []frontier.Item
	for _, l := range doc.Links {
		if l.NoFollow && !c.opts.FollowNoFollow {
			continue
		}
		cu, err := frontier.Canonical(l.URL)
		if err != nil || seen[cu] {
			continue
		}
		seen[cu] = true
		u, err := url.Parse(cu)
		if err != nil {
			continue
		}
		if ok, _ := scope.Allows(u); !ok {
			continue
		}
		out = append(out, frontier.Item{URL: cu, Depth: it.Depth + 1, Source: it.URL})
	}
	return out
}

// fetchFailed retries what may succeed later and records the rest.
func (c *Crawler) fetchFailed(ctx context.Context, it frontier.Item, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var fe *FetchError
	if !errors.As(err, &fe) {
		c.countError(errKindOther)
		return c.fail(ctx, it, err.Error())
	}
	switch fe.Kind {
	case KindDisallowed:
		c.skip(skipRobots)
		c.opts.Logger.Debug("skipped", "url", it.URL, "reason", fe.Error())
		return c.done(ctx, it, outcomeRobots)
	case KindOutOfScope:
		c.skip(skipOutOfScope)
		c.opts.Logger.Info("skipped", "url", it.URL, "reason", fe.Error())
		return c.done(ctx, it, outcomeScope)
	}
	if fe.Retryable() && it.Attempts < c.opts.Retries {
		wait := c.backoff(it.Attempts, fe.RetryAfter)
		c.stats.retries.Add(1)
		// A long wait (a Retry-After of an hour is capped at 10 minutes)
		// may leave the crawl idle with one URL queued: say so at info.
		level := slog.LevelDebug
		if wait >= longRetryWait {
			level = slog.LevelInfo
		}
		c.opts.Logger.Log(ctx, level, "retry", "url", it.URL, "attempt", it.Attempts+1, "after", wait, "error", err)
		if rerr := c.lostLease(c.queue.Retry(ctx, it, wait, err.Error()), it); rerr != nil {
			return fmt.Errorf("crawler: retry %s: %w", it.URL, rerr)
		}
		return nil
	}
	c.countError(fe.Kind)
	return c.fail(ctx, it, err.Error())
}

func (c *Crawler) backoff(attempts int, retryAfter time.Duration) time.Duration {
	d := c.opts.RetryBackoff
	for range attempts {
		d *= 2
		if d > maxRetryBackoff {
			d = maxRetryBackoff
			break
		}
	}
	return max(d, min(retryAfter, maxRetryBackoff))
}

func (c *Crawler) fail(ctx context.Context, it frontier.Item, reason string) error {
	c.opts.Logger.Info("failed", "url", it.URL, "reason", reason)
	err := c.queue.Fail(ctx, it, reason)
	if err == nil {
		err = c.recordLocal(ctx, it, reason, true)
	}
	if err := c.lostLease(err, it); err != nil {
		return fmt.Errorf("crawler: record failure of %s: %w", it.URL, err)
	}
	return nil
}

func (c *Crawler) done(ctx context.Context, it frontier.Item, outcome string) error {
	err := c.queue.Done(ctx, it, outcome)
	if err == nil {
		err = c.recordLocal(ctx, it, outcome, false)
	}
	if err := c.lostLease(err, it); err != nil {
		return fmt.Errorf("crawler: mark %s done: %w", it.URL, err)
	}
	return nil
}

// applyCrawlDelay reads the robots.txt Crawl-delay of rawURL's host once
// and raises the host's delay to it, capped by MaxCrawlDelay. The error is
// Fetch's for a robots.txt that cannot be read (the URL is retried).
func (c *Crawler) applyCrawlDelay(ctx context.Context, rawURL string) error {
	if !c.opts.Fetch.RespectRobots {
		return nil
	}
	host := frontier.HostKey(rawURL)
	if _, done := c.robotsDone.Load(host); done {
		return nil
	}
	d, err := c.fetcher.CrawlDelay(ctx, rawURL)
	if err != nil {
		return err
	}
	c.robotsDone.Store(host, struct{}{})
	if d > 0 {
		capped := min(d, c.opts.MaxCrawlDelay)
		c.queue.SetHostDelay(host, capped)
		c.opts.Logger.Info("robots.txt crawl-delay", "host", host, "delay", capped)
	}
	return nil
}
