package crawler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/storage"
)

// DedupOptions tunes DedupWith. The zero value is Dedup's behaviour: one
// transaction per record.
type DedupOptions struct {
	// Batch is how many records are decided together. 0 or 1: each
	// record is committed in its own fsync'd transaction as soon as it is
	// judged (1 to 2 ms each here: the limit for text-only input).
	// N > 1: records are fingerprinted in parallel in batches of up to N
	// records (and BatchBytes); the near-duplicates of a batch among
	// itself are found with a batch join (contentseen.Joiner), against the
	// stored pages with the index; the batch's outcomes are then committed
	// in input order in a few transactions, each atomic as the per-record
	// one (store or drop, index, the record's key, then the drop-log
	// lines). The outcomes are exactly those of one by one: the first
	// record in input order wins, and a record near a dropped one only is
	// kept. A crash loses at most the transaction in flight; a rerun
	// resumes after the last committed one. DefaultDedupBatch is the
	// value `crawl dedup` uses for large inputs.
	Batch int
	// BatchBytes closes a batch early once its records' bodies and texts
	// reach it, which bounds memory (about three batches are held: one
	// being read, one waiting, one being committed). Default
	// DefaultDedupBatchBytes.
	BatchBytes int64
}

// Batch sizes. 4,096 text records of a kilobyte are decided and committed
// in about half a second here, so progress stays visible; 16 MiB hold
// about 300 HTML pages of the corpus.
const (
	DefaultDedupBatch      = 4096
	DefaultDedupBatchBytes = 16 << 20
)

// A batch is committed in transactions of at most batchTxRecords records
// and batchTxBytes bytes of bodies and texts: bbolt keeps a transaction's
// dirty pages in memory until it commits. Bigger transactions write the
// pages that random keys (digests, URLs) dirty fewer times: 100,000
// text-only records took 8.4-9.5 s in transactions of 1,024 and 7.6 s in
// transactions of 4,096 here (BenchmarkDedupText in cmd/crawl). Variables
// so that tests can make transactions small.
var (
	batchTxRecords       = 4096
	batchTxBytes   int64 = 8 << 20
)

// batchCrashHook, when set (by tests), is called inside each batch
// transaction before it commits ("tx") and after it commits, before its
// drop-log lines ("committed"); an error from it stops Dedup there, as a
// crash would.
var batchCrashHook func(stage string) error

func (o *DedupOptions) setDefaults() {
	if o.BatchBytes <= 0 {
		o.BatchBytes = DefaultDedupBatchBytes
	}
}

// dedupBatches is Dedup in batches: the reader cuts the input into
// batches while workers examine their records; the calling goroutine
// decides and commits one batch at a time, in input order, while the next
// batch is being read and examined.
func (c *Crawler) dedupBatches(take context.Context, src RecordSource, onKept func(*storage.Page) error, o DedupOptions) error {
	workers := runtime.GOMAXPROCS(0)
	jobs := make(chan *dedupJob, workers)
	batches := make(chan []*dedupJob, 1)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() { c.examineJobs(jobs) })
	}
	readErr := make(chan error, 1)
	go func() {
		defer close(batches)
		defer close(jobs)
		readErr <- c.readBatches(take, src, o, jobs, batches)
	}()
	log, err := openBatchLog(c.opts.DropLog)
	var commitErr error
	if err != nil {
		commitErr = err
		c.stopTaking()
	}
	for b := range batches {
		for _, j := range b {
			<-j.ready
		}
		if commitErr != nil {
			continue // drain: the reader and workers stop on take
		}
		if commitErr = c.dedupBatch(b, log, onKept); commitErr != nil {
			c.stopTaking()
			continue
		}
		if c.maxPagesReached() {
			c.stopTaking()
		}
	}
	wg.Wait()
	if log != nil {
		commitErr = errors.Join(commitErr, log.close())
	}
	return errors.Join(commitErr, <-readErr)
}

// readBatches turns records into jobs, as readRecords, and hands them to
// the workers at once and to the committer in batches. The batch being
// filled when src fails is handed on (what came before an error is
// decided, as one by one); after a cancellation it is dropped (a rerun
// reads it again).
func (c *Crawler) readBatches(ctx context.Context, src RecordSource, o DedupOptions, jobs chan<- *dedupJob, batches chan<- []*dedupJob) error {
	var cur []*dedupJob
	var size int64
	flush := func() {
		if len(cur) > 0 {
			select {
			case batches <- cur:
			case <-ctx.Done():
			}
		}
		cur, size = nil, 0
	}
	for ctx.Err() == nil {
		rec, err := src.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			flush()
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("crawler: dedup: read: %w", err)
		}
		c.stats.fetched.Add(1)
		j, err := c.newDedupJob(rec)
		if err != nil {
			flush()
			return err
		}
		if j == nil {
			continue
		}
		// Sized before a worker owns j.p; a worker takes it: workers only
		// stop when jobs closes.
		j.size = int64(len(rec.Body) + len(rec.Text))
		jobs <- j
		cur = append(cur, j)
		size += j.size
		if len(cur) >= o.Batch || size >= o.BatchBytes {
			flush()
		}
	}
	return nil
}

// dedupBatch decides the examined jobs of one batch and commits the
// outcomes in input order, in transactions of at most batchTxRecords
// records and batchTxBytes bytes.
func (c *Crawler) dedupBatch(b []*dedupJob, log *batchLog, onKept func(*storage.Page) error) error {
	ds, err := c.decideBatch(b)
	if err != nil {
		return err
	}
	for start := 0; start < len(ds); {
		end, size := start, int64(0)
		for end < len(ds) && end-start < batchTxRecords && (end == start || size < batchTxBytes) {
			size += ds[end].j.size
			end++
		}
		if err := c.commitDecisions(ds[start:end], b, log, onKept); err != nil {
			return err
		}
		start = end
	}
	if len(ds) < len(b) {
		c.stopTaking() // MaxPages reached inside the batch
	}
	return nil
}

// commitDecisions records ds in one transaction, then writes their
// drop-log lines with one fsync, then counts them and hands kept pages to
// onKept. Like commit, it holds commitMu across the transaction and the
// log, so the log follows commit order.
func (c *Crawler) commitDecisions(ds []decision, b []*dedupJob, log *batchLog, onKept func(*storage.Page) error) error {
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	drops := make([]*storage.DropRecord, len(ds))
	err := c.db.Update(func(tx *bolt.Tx) error {
		clear(drops)
		for i := range ds {
			d := &ds[i]
			p := d.j.p
			var err error
			switch d.kind {
			case decideMark:
				err = markTx(tx, d.j.key, d.outcome)
			case decideNoIndex:
				err = c.finishTx(tx, p, outcomeNoIndex, false)
			case decideKeep:
				err = c.storeTx(tx, p)
			case decideDrop:
				drops[i], err = c.batchDropRecord(tx, d, b)
				if err == nil {
					err = c.dropTx(tx, p, drops[i])
				}
			}
			if err != nil {
				return fmt.Errorf("crawler: record %s: %w", p.item.URL, err)
			}
		}
		if batchCrashHook != nil {
			return batchCrashHook("tx")
		}
		return nil
	})
	if err == nil && batchCrashHook != nil {
		err = batchCrashHook("committed")
	}
	if err != nil {
		return err
	}
	c.releaseWritten()
	var lines []storage.DropRecord
	for _, r := range drops {
		if r != nil {
			lines = append(lines, *r)
		}
	}
	// Written right after the commit, as commit does: a crash in between
	// leaves lines missing, which the next Open restores from the store.
	if err := log.write(lines); err != nil {
		return fmt.Errorf("crawler: drop log: %w", err)
	}
	for i := range ds {
		if err := c.countDecision(&ds[i], drops[i], onKept); err != nil {
			return err
		}
	}
	return nil
}

// batchDropRecord builds the drop record of d inside tx: the page it
// duplicates is either stored before the batch (read as commit reads it)
// or kept earlier in the batch, stored by now in this or an earlier
// transaction.
func (c *Crawler) batchDropRecord(tx *bolt.Tx, d *decision, b []*dedupJob) (*storage.DropRecord, error) {
	if d.origBatch < 0 {
		orig, err := c.store.PageHeaderTx(tx, d.v.id)
		if err != nil {
			return nil, fmt.Errorf("%s match %d: %w", d.v.reason, d.v.id, err)
		}
		return c.dropRecord(d.j.p, orig, &d.v), nil
	}
	op := b[d.origBatch].p
	id, ok := c.store.URLStoredTx(tx, op.item.URL)
	if !ok {
		return nil, fmt.Errorf("%s match %s: kept earlier in the batch but not stored", d.v.reason, op.item.URL)
	}
	orig := &storage.Page{ID: id, URL: op.item.URL, Fingerprint: uint64(op.fp)}
	return c.dropRecord(d.j.p, orig, &d.v), nil
}

// countDecision does after the commit what commitRecord does for one
// record: counters, log lines and onKept.
func (c *Crawler) countDecision(d *decision, dropped *storage.DropRecord, onKept func(*storage.Page) error) error {
	p := d.j.p
	switch d.kind {
	case decideSkip:
		c.stats.skipped.Add(1)
		c.stats.decided.Add(1)
		return nil
	case decideMark:
		switch {
		case d.j.failure != "":
			c.stats.errors.Add(1)
			c.stats.decided.Add(1)
			c.opts.Logger.Info("failed", "url", p.item.URL, "reason", d.j.failure)
		case d.outcome == outcomeURLTaken:
			c.stats.skipped.Add(1)
			c.stats.decided.Add(1)
			c.opts.Logger.Info("skipped", "url", p.item.URL, "reason", "the store already holds a page under this url")
		default:
			c.countNotHTML(p)
		}
		return nil
	}
	c.stats.decided.Add(1)
	c.count(p, dropped)
	if d.kind != decideKeep || onKept == nil {
		return nil
	}
	sp, err := c.store.ByURL(context.Background(), p.item.URL)
	if err != nil {
		return fmt.Errorf("crawler: dedup: read back %s: %w", p.item.URL, err)
	}
	sp.Body, sp.Header = nil, nil
	return onKept(sp)
}
