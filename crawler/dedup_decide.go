package crawler

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/contentseen"
)

// Deciding a batch as one by one would. One by one, record i is judged
// against everything stored before it: the pages stored before the batch
// (S) and the records of the batch kept before i. Both parts are found
// apart and combined in input order:
//
//   - S: looked up per record, on several goroutines, in read transactions
//     of the state before the batch (nothing else writes meanwhile: Dedup
//     is the data directory's only writer): the key and URL checks and the
//     judge's verdict against S alone (judgeTx: the exact copy by digest,
//     else the first candidate within its radius (Crawler.radius), least
//     distance then least id, whose sketch verifies).
//   - the batch itself: an in-memory index (contentseen.MemIndex, the
//     data directory's layout, so it answers the same radius by
//     multi-probe) of the records kept so far, filled and queried in the
//     input-order pass below; its candidates are verified with the
//     records' sketches, in memory.
//
// A kept record gets a larger page id than any stored page, and earlier
// kept records smaller ids than later ones, so "least distance, then
// least id" is: the nearer one; at equal distance the stored page, else
// the earliest kept record.
//
// Why NearTx per record for S and not S streamed through the batch's
// tables (the join's direction). Measured here (`go test -run '^$' -bench
// DedupStoredSide -benchtime 200000x ./crawler/`, shared 2-core machine):
// NearTx costs 1.3 µs per record with 10^4 stored pages and 5.3 µs with
// 10^5; streaming costs per stored page a read (the index has no bulk
// read; FingerprintTx 0.7-0.8 µs, the store's PageHeaders 2.7-3.2 µs) plus
// a Probe (20-25 ns with a 4,096 batch). So streaming wins only while |S|
// is below about 2 |B| (10^4 stored) to 7 |B| (10^5), i.e. for the first
// few batches into a fresh directory, where both take milliseconds; with
// a large S (a crawl's directory) probing stays proportional to the batch
// (4,096 × 5.3 µs = 22 ms at 10^5, spread over GOMAXPROCS goroutines)
// while a stream grows with S (77 ms at 10^5, 7.7 s at 10^7 per batch).

// decisionKind is what a batch's commit does for one record.
type decisionKind uint8

const (
	decideSkip    decisionKind = iota // key already decided: nothing recorded
	decideMark                        // only the key's outcome: a failure, not HTML, URL taken
	decideNoIndex                     // noindex: the outcome, as commit records it
	decideKeep                        // stored (and indexed unless thin)
	decideDrop                        // dropped as an exact or near duplicate
)

// decision is the outcome of one record of a batch.
type decision struct {
	j       *dedupJob
	kind    decisionKind
	outcome string // decideMark
	// decideDrop: the verdict (reason, distance, resemblance) and the
	// page duplicated: stored before the batch (v.id, origBatch < 0) or
	// kept earlier in the batch (origBatch, its index in the batch).
	v         verdict
	origBatch int
}

// lookup is what the state before the batch says about one record.
type lookup struct {
	decided   bool     // its key has an outcome already
	urlStored bool     // a page is stored under its URL
	stored    *verdict // the judge's verdict against the stored pages alone
	// fpStored: the index holds its fingerprint already (under another
	// page, whose text the sketch told apart): keeping it adds nothing to
	// the index, which keeps the first id of a fingerprint.
	fpStored bool
}

// judged reports whether p goes through the duplicate look-ups, as in
// commit.
func (c *Crawler) judged(p *page) bool {
	return !p.thin && !c.opts.ContentSeenOff && !p.doc.NoIndex
}

// lookupChunk is the least number of records a look-up goroutine takes.
const lookupChunk = 256

// lookupBatch looks b's records up in the state before the batch, on up to
// GOMAXPROCS goroutines, each in its own read transaction.
func (c *Crawler) lookupBatch(b []*dedupJob) ([]lookup, error) {
	ls := make([]lookup, len(b))
	workers := max(1, min(runtime.GOMAXPROCS(0), len(b)/lookupChunk))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := len(b)*w/workers, len(b)*(w+1)/workers
		wg.Go(func() {
			errs[w] = c.db.View(func(tx *bolt.Tx) error {
				for i := lo; i < hi; i++ {
					if err := c.lookupTx(tx, b[i], &ls[i]); err != nil {
						return fmt.Errorf("crawler: dedup: look up %s: %w", b[i].p.item.URL, err)
					}
				}
				return nil
			})
		})
	}
	wg.Wait()
	return ls, errors.Join(errs...)
}

func (c *Crawler) lookupTx(tx *bolt.Tx, j *dedupJob, l *lookup) error {
	if l.decided = tx.Bucket(dedupBucket).Get([]byte(j.key)) != nil; l.decided {
		return nil
	}
	if j.failure != "" || j.outcome != "" {
		return nil
	}
	p := j.p
	_, l.urlStored = c.store.URLStoredTx(tx, p.item.URL)
	if l.urlStored || !c.judged(p) {
		return nil
	}
	var err error
	if l.stored, err = c.judgeTx(tx, p); err != nil {
		return err
	}
	ms, err := c.index.NearTx(tx, p.fp, 0)
	l.fpStored = len(ms) > 0
	return err
}

// decideBatch decides b's records in input order. It returns fewer
// decisions than records when MaxPages is reached inside the batch: the
// rest stay undecided, as one by one.
func (c *Crawler) decideBatch(b []*dedupJob) ([]decision, error) {
	ls, err := c.lookupBatch(b)
	if err != nil {
		return nil, err
	}
	// The records kept so far in this batch, by batch index: the batch's
	// side of one by one's index. A MemIndex answers the candidate radius
	// past the layout's K (multi-probe), which the batch join does not.
	batch := contentseen.NewMemIndex(c.index.Layout())
	defer batch.Close()

	ds := make([]decision, 0, len(b))
	keys := make(map[string]bool, len(b))    // keys decided in this batch
	keptURL := make(map[string]bool, len(b)) // URLs kept in this batch
	keptDigest := map[[16]byte]int{}         // digest -> first kept record with it
	nKept := int64(0)
	for i, j := range b {
		d := decision{j: j, origBatch: -1}
		p, l := j.p, &ls[i]
		switch {
		case l.decided || keys[j.key]:
			d.kind = decideSkip
			ds = append(ds, d)
			continue
		case j.failure != "":
			d.kind, d.outcome = decideMark, outcomeFailed+j.failure
		case j.outcome != "":
			d.kind, d.outcome = decideMark, j.outcome
		case l.urlStored || keptURL[p.item.URL]:
			d.kind, d.outcome = decideMark, outcomeURLTaken
		case p.doc.NoIndex:
			d.kind = decideNoIndex
		case c.opts.MaxPages > 0 && c.storedBefore+c.stats.stored.Load()+nKept >= int64(c.opts.MaxPages):
			return ds, nil
		default:
			if err := c.judge(&d, i, l, batch, b, keptDigest); err != nil {
				return nil, err
			}
		}
		keys[j.key] = true
		if d.kind == decideKeep {
			keptURL[p.item.URL] = true
			nKept++
			if c.judged(p) {
				if _, ok := keptDigest[p.digest]; !ok {
					keptDigest[p.digest] = i
				}
				if !ls[i].fpStored {
					if err := batch.Add(context.Background(), uint64(i), p.fp); err != nil {
						return nil, fmt.Errorf("crawler: dedup: %w", err)
					}
				}
			}
		}
		ds = append(ds, d)
	}
	return ds, nil
}

// judge decides whether record i, which the state before the batch does
// not settle, is kept or dropped, as judgeTx would with the records kept
// before i stored: an exact copy by digest (a stored page, whose ids are
// smaller, then a record kept earlier in the batch), then the first
// candidate that verifies in order of distance, then id: the stored
// verdict, or a record kept earlier that the join finds within k and whose
// sketch verifies, whichever is nearer (the stored page on a tie).
func (c *Crawler) judge(d *decision, i int, l *lookup, batch *contentseen.MemIndex, b []*dedupJob, keptDigest map[[16]byte]int) error {
	p := d.j.p
	d.kind = decideKeep
	if !c.judged(p) {
		return nil
	}
	switch bi, ok := keptDigest[p.digest]; {
	case l.stored != nil && l.stored.byDigest:
		d.kind, d.v = decideDrop, *l.stored
		return nil
	case ok:
		d.kind, d.origBatch = decideDrop, bi
		d.v = verdict{reason: reasonExact, dist: contentseen.Distance(p.fp, b[bi].p.fp), res: exactResemblance, byDigest: true}
		return nil
	}
	// The first record kept earlier that verifies, nearest first, then
	// earliest (Near's order); it wins over the stored verdict only when
	// strictly nearer (stored pages have the smaller ids).
	r := c.radius(p)
	best, dist := -1, r+1
	if l.stored != nil {
		dist = l.stored.dist
	}
	var bestRes contentseen.Resemblance
	ms, err := batch.Near(context.Background(), p.fp, r)
	if err != nil {
		return fmt.Errorf("crawler: dedup: batch candidates: %w", err)
	}
	for _, m := range ms {
		if m.Distance >= dist {
			break
		}
		o := int(m.ID)
		if res := contentseen.Compare(p.sketch, b[o].p.sketch); c.thresholds.Verify(res) {
			best, dist, bestRes = o, m.Distance, res
			break
		}
	}
	switch {
	case best >= 0:
		d.kind, d.origBatch = decideDrop, best
		d.v = verdict{reason: reasonNear, dist: dist, res: bestRes}
	case l.stored != nil:
		d.kind, d.v = decideDrop, *l.stored
	}
	return nil
}
