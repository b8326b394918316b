package crawler

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/extract"
	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/storage"
)

// Record is one page already on disk (an HTML file, a JSON line, a WARC
// response record) for Dedup. It is a plain value owned by Dedup once
// returned by a RecordSource.
type Record struct {
	// URL names the page in the store and the drop log. An http(s) URL is
	// made canonical; anything else (a file: URL) is kept as it is.
	URL string
	// FinalURL is where the page was fetched from after redirects, when
	// the source knows it and it is not URL (a WARC of simcrawl's export).
	// It is kept as the page's final URL; relative links resolve against
	// it.
	FinalURL string
	// Key identifies the input for resuming: a rerun skips a key already
	// decided. Default: the URL (after canonicalisation). Give a file path
	// or a WARC record offset when the URL is not unique to the input.
	Key string
	// Body is the raw HTML, extracted like a fetched page. When Body is nil,
	// Text is taken as the extracted text as it is (and Title and Lang,
	// stored with it, with it).
	Body              []byte
	Text, Title, Lang string
	ContentType       string      // of Body; default "text/html"
	Header            http.Header // optional response headers, kept for a WARC export
	Status            int         // default 200
	FetchedAt         time.Time   // default: when Dedup reads it
	Truncated         bool        // Body was cut by the source's size limit
}

// RecordSource yields records one at a time, in a fixed order, so that a
// rerun meets them in the same order. Next returns io.EOF after the last
// record; any other error stops Dedup. Dedup calls Next from one goroutine.
type RecordSource interface {
	Next(ctx context.Context) (*Record, error)
}

// dedupBucket maps a record's Key to its outcome: a rerun skips the keys in
// it. Each key is written in the transaction that records its outcome, so a
// crash never leaves a record half counted.
var dedupBucket = []byte("dedup")

// Outcomes of dedup records that commit does not decide.
const (
	outcomeURLTaken = "skipped:url-stored" // new text under a URL the store holds
	outcomeFailed   = "failed:"
)

// Dedup judges records from src with the crawl's own pipeline: the same
// extraction, fingerprint, exact and near look-ups and one-transaction
// commit (store or drop, index, drop log), so a corpus is deduplicated
// against everything already in the data directory and adds to it. Records
// whose Key is already decided are skipped (counted as skipped), so a rerun
// after a crash or Ctrl-C resumes. Kept records that the store already has
// under the same URL with other text are skipped too: the store holds one
// page per URL, and the first one stays.
//
// Extraction runs on GOMAXPROCS goroutines; commits follow input order, so
// which of two near-duplicates is kept does not depend on timing. Memory is
// bounded by a few records per goroutine. onKept, when not nil, is called
// after each kept record's commit, in input order, with the stored page
// (text, no body); an error from it stops Dedup.
//
// Dedup is an alternative to Run on an opened Crawler: call one of them
// (or DedupWith, which decides large inputs faster in batches), once. It
// returns ctx's error after a cancellation, with what was decided saved.
func (c *Crawler) Dedup(ctx context.Context, src RecordSource, onKept func(*storage.Page) error) (*Summary, error) {
	return c.DedupWith(ctx, src, onKept, DedupOptions{})
}

// DedupWith is Dedup with options: with DedupOptions.Batch > 1 records
// are decided in batches (see DedupOptions), with the same outcomes as one
// by one.
func (c *Crawler) DedupWith(ctx context.Context, src RecordSource, onKept func(*storage.Page) error, o DedupOptions) (*Summary, error) {
	start := time.Now()
	o.setDefaults()
	if err := c.db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(dedupBucket)
		return err
	}); err != nil {
		return nil, fmt.Errorf("crawler: dedup bucket: %w", err)
	}
	pages, _, err := c.store.Counts(ctx)
	if err != nil {
		return nil, fmt.Errorf("crawler: count pages: %w", err)
	}
	c.storedBefore = int64(pages)
	take, stopTaking := context.WithCancel(ctx)
	defer stopTaking()
	c.stopTaking = stopTaking

	statusDone := c.startStatus(start)
	var runErr error
	if o.Batch > 1 {
		runErr = c.dedupBatches(take, src, onKept, o)
	} else {
		runErr = c.dedupEach(take, src, onKept)
	}
	statusDone()
	sum, serr := c.summary(ctx, start)
	if sum != nil {
		// A record read is decided, or left for a rerun: past the page
		// limit, or read as the run stopped.
		sum.Run.Held = sum.Run.Fetched - c.stats.decided.Load()
	}
	if runErr != nil {
		return sum, diskFull(runErr, c.opts.DataDir)
	}
	if serr != nil {
		return nil, serr
	}
	return sum, ctx.Err()
}

// dedupEach extracts on GOMAXPROCS workers and commits each record in its
// own transaction, in input order.
func (c *Crawler) dedupEach(take context.Context, src RecordSource, onKept func(*storage.Page) error) error {
	workers := runtime.GOMAXPROCS(0)
	jobs := make(chan *dedupJob, workers)
	order := make(chan *dedupJob, 2*workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() { c.examineJobs(jobs) })
	}
	readErr := make(chan error, 1)
	go func() {
		defer close(order)
		defer close(jobs)
		readErr <- c.readRecords(take, src, jobs, order)
	}()
	var commitErr error
	for j := range order {
		<-j.ready
		if commitErr != nil {
			continue // drain: the reader and workers stop on take
		}
		if commitErr = c.commitRecord(j, onKept); commitErr != nil {
			c.stopTaking()
			continue
		}
		if c.maxPagesReached() {
			c.stopTaking()
		}
	}
	wg.Wait()
	return errors.Join(commitErr, <-readErr)
}

// examineJobs is a worker: it examines jobs until the channel closes.
func (c *Crawler) examineJobs(jobs <-chan *dedupJob) {
	for j := range jobs {
		j.outcome, j.failure = c.examine(j.p)
		close(j.ready)
	}
}

// dedupJob is one record on its way through Dedup: examined by a worker,
// then committed in input order.
type dedupJob struct {
	p                *page
	key              string
	outcome, failure string
	ready            chan struct{} // closed when examined
	size             int64         // bytes of the record's body and text (batches only)
}

// readRecords turns records into jobs, skipping keys already decided, until
// src ends or ctx is done.
func (c *Crawler) readRecords(ctx context.Context, src RecordSource, jobs, order chan<- *dedupJob) error {
	for ctx.Err() == nil {
		rec, err := src.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("crawler: dedup: read: %w", err)
		}
		c.stats.fetched.Add(1)
		j, err := c.newDedupJob(rec)
		if err != nil {
			return err
		}
		if j == nil {
			continue
		}
		select {
		case order <- j:
		case <-ctx.Done():
			return nil
		}
		jobs <- j // a worker takes it: workers only stop when jobs closes
	}
	return nil
}

// newDedupJob builds the page for rec, or returns nil when rec's key is
// already decided.
func (c *Crawler) newDedupJob(rec *Record) (*dedupJob, error) {
	u, key := recordKey(rec)
	if u == "" {
		return nil, errors.New("crawler: dedup: record without a url")
	}
	decided, err := c.decided(key)
	if err != nil || decided {
		if decided {
			c.stats.skipped.Add(1)
			c.stats.decided.Add(1)
		}
		return nil, err
	}
	resp := &Response{
		URL: u, FinalURL: cmp.Or(strings.TrimSpace(rec.FinalURL), u), Status: rec.Status, Header: rec.Header, ContentType: rec.ContentType,
		Body: rec.Body, Truncated: rec.Truncated, FetchedAt: rec.FetchedAt,
	}
	if resp.Status == 0 {
		resp.Status = http.StatusOK
	}
	if resp.ContentType == "" && rec.Body != nil {
		resp.ContentType = "text/html"
	}
	if resp.FetchedAt.IsZero() {
		resp.FetchedAt = time.Now().UTC()
	}
	p := &page{item: frontier.Item{URL: u}, resp: resp}
	if rec.Body == nil {
		p.doc = &extract.Document{Text: rec.Text, Title: rec.Title, Lang: rec.Lang}
	}
	p.record = func(tx *bolt.Tx, outcome string) error {
		return markTx(tx, key, outcome)
	}
	return &dedupJob{p: p, key: key, ready: make(chan struct{})}, nil
}

// countNotHTML counts and logs a dedup record decided as not HTML.
func (c *Crawler) countNotHTML(p *page) {
	c.skip(skipNonHTML)
	c.stats.decided.Add(1)
	c.logSkip(p, p.notHTML)
}

// recordKey returns rec's URL, canonical when it is http(s), and the key
// its outcome is recorded under: rec.Key, else that URL.
func recordKey(rec *Record) (u, key string) {
	u = strings.TrimSpace(rec.URL)
	if lu := strings.ToLower(u); strings.HasPrefix(lu, "http://") || strings.HasPrefix(lu, "https://") {
		if cu, err := frontier.Canonical(u); err == nil {
			u = cu
		}
	}
	key = rec.Key
	if key == "" {
		key = u
	}
	return u, key
}

func (c *Crawler) decided(key string) (bool, error) {
	var ok bool
	err := c.db.View(func(tx *bolt.Tx) error {
		ok = tx.Bucket(dedupBucket).Get([]byte(key)) != nil
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("crawler: dedup: %w", err)
	}
	return ok, nil
}

func markTx(tx *bolt.Tx, key, outcome string) error {
	if err := tx.Bucket(dedupBucket).Put([]byte(key), []byte(outcome)); err != nil {
		return fmt.Errorf("mark %q: %w", key, err)
	}
	return nil
}

func (c *Crawler) mark(key, outcome string) error {
	if err := c.db.Update(func(tx *bolt.Tx) error { return markTx(tx, key, outcome) }); err != nil {
		return fmt.Errorf("crawler: dedup: %w", err)
	}
	return nil
}

// commitRecord records j's outcome. The key is checked again because the
// same key may come twice in one input (a URL crawled twice in a WARC).
func (c *Crawler) commitRecord(j *dedupJob, onKept func(*storage.Page) error) error {
	decided, err := c.decided(j.key)
	if err != nil {
		return err
	}
	if decided {
		c.stats.skipped.Add(1)
		c.stats.decided.Add(1)
		return nil
	}
	switch {
	case j.failure != "":
		if err := c.mark(j.key, outcomeFailed+j.failure); err != nil {
			return err
		}
		c.stats.errors.Add(1)
		c.stats.decided.Add(1)
		c.opts.Logger.Info("failed", "url", j.p.item.URL, "reason", j.failure)
		return nil
	case j.outcome != "":
		if err := c.mark(j.key, j.outcome); err != nil {
			return err
		}
		c.countNotHTML(j.p)
		return nil
	}
	before := c.stats.stored.Load()
	err = c.commitOrHold(j.p)
	switch {
	case errors.Is(err, errMaxPages):
		c.stats.held.Add(1) // left for a rerun
		return nil
	case errors.Is(err, storage.ErrExists):
		if err := c.mark(j.key, outcomeURLTaken); err != nil {
			return err
		}
		c.stats.skipped.Add(1)
		c.stats.decided.Add(1)
		c.opts.Logger.Info("skipped", "url", j.p.item.URL, "reason", "the store already holds a page under this url")
		return nil
	case err != nil:
		return err
	}
	c.stats.decided.Add(1)
	if onKept == nil || c.stats.stored.Load() == before {
		return nil
	}
	// The ID is the store's; reading the page back costs a look-up and a
	// decompression, paid only by callers that want kept pages.
	sp, err := c.store.ByURL(context.Background(), j.p.item.URL)
	if err != nil {
		return fmt.Errorf("crawler: dedup: read back %s: %w", j.p.item.URL, err)
	}
	sp.Body, sp.Header = nil, nil
	return onKept(sp)
}
