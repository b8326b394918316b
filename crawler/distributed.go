package crawler

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/frontier"
)

// Distributed makes a Crawler one worker of a crawl shared by several
// processes, on one machine or many: the frontier and the ContentSeen index
// are shared (for example frontier/redisfrontier and contentseen/redisindex),
// while the pages and the drop log stay in the worker's own data directory.
//
// A page is judged through contentseen.Judge with the same judge as the
// single-process crawl (the same digest, or a candidate within k whose
// sketch verifies), then:
//
//   - a copy of a committed entry is dropped (a drop record and a drop-log
//     line naming the stored page's URL, its ID and, when another worker
//     stored it, that worker);
//   - a copy of a pending entry (claimed by a worker that has not stored
//     it yet) is queued again for after the entry's lease ends;
//   - a page claimed is stored with its claim (the entry's Seq) in one
//     bbolt transaction, then confirmed in the shared index, then finished
//     in the queue with its links. A claim stored but never confirmed (a
//     crash in between) is confirmed by the next Run on the data directory;
//     if its lease was lost meanwhile, the page is judged and claimed again
//     (it stays stored either way, see confirmStored).
//
// An index that heals its store's lost writes (contentseen.Healer, as
// redisindex does after a Redis restart) is asked once a second while Run
// runs (healLoop), so that this worker replays its recent claims within
// the index's settle window even while it claims nothing.
type Distributed struct {
	// Queue is the crawl's shared frontier: Run adds the seeds to it and
	// the workers take their URLs from it.
	Queue frontier.Queue
	// Index is the crawl's shared ContentSeen index. Its K is the crawl's
	// widest radius: Options.K, or the short texts' radius when larger
	// (Options.ShortK with ShortFeatures > 0), at most what its layout
	// answers; each page's candidates are those within its own radius, as
	// in the single-process crawl.
	Index contentseen.Shared
	// Worker names this worker in the index's entries ("worker/page-id"),
	// so a copy's drop record names where its page is stored. Letters,
	// digits, '.', '_' and '-' (WorkerName derives one from the data
	// directory).
	Worker string
	// Budget, when set, holds Options.MaxPages across all workers: a page
	// is stored only after Budget.ClaimPage grants it. Without it MaxPages
	// counts this worker's pages only.
	Budget Budget
}

// Budget is a page budget shared by the workers of a crawl
// (redisfrontier.Frontier has one).
type Budget interface {
	// ClaimPage takes one page of max, reporting false when all are
	// taken.
	ClaimPage(ctx context.Context, max int) (bool, error)
	// ReturnPage gives back a page claimed but not stored.
	ReturnPage(ctx context.Context) error
}

// FailedRetrier is a shared frontier that can queue failed URLs again
// (redisfrontier.Frontier is one). With Options.RetryFailed, a worker
// hands it the URLs its own data directory recorded as failed.
type FailedRetrier interface {
	// RetryFailed queues again those of items the crawl recorded as
	// failed, with their attempts reset, and returns how many.
	RetryFailed(ctx context.Context, items ...frontier.Item) (int, error)
}

// retryFailedShared queues again, through the shared frontier, the URLs
// this worker's data directory recorded as failed, then forgets them here
// (a failure again records them again). URLs other workers failed are
// theirs to retry.
func (c *Crawler) retryFailedShared(ctx context.Context) (int, error) {
	var items []frontier.Item
	if err := c.db.View(func(tx *bolt.Tx) error {
		return frontier.ReadFailedItems(tx, "", func(it frontier.Item) error {
			items = append(items, it)
			return nil
		})
	}); err != nil {
		return 0, fmt.Errorf("read failed urls: %w", err)
	}
	if len(items) == 0 {
		return 0, nil
	}
	urls := make([]string, len(items))
	for i, it := range items {
		urls[i] = it.URL
	}
	n, err := c.dist.Queue.(FailedRetrier).RetryFailed(ctx, items...)
	if err != nil {
		return 0, err
	}
	if err := c.frontier.Forget(ctx, urls...); err != nil {
		return 0, fmt.Errorf("forget failed urls: %w", err)
	}
	return n, nil
}

// WidestRadius is the widest candidate radius of a crawl with these
// options: K, or the short texts' ShortK when larger and ShortFeatures is
// set. A shared index is made with it (Distributed.Index).
func (o *Options) WidestRadius() int {
	if o.ShortFeatures > 0 {
		return max(o.K, o.ShortK)
	}
	return o.K
}

var validWorker = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

func (d *Distributed) validate(o *Options) []error {
	var errs []error
	if d.Queue == nil || d.Index == nil {
		errs = append(errs, errors.New("crawler: distributed: Queue and Index are required"))
	}
	if !validWorker.MatchString(d.Worker) {
		errs = append(errs, fmt.Errorf("crawler: distributed: worker name %q: want 1 to 64 letters, digits, '.', '_' or '-'", d.Worker))
	}
	if d.Index != nil {
		if want := min(o.WidestRadius(), d.Index.Layout().MaxK()); d.Index.K() != want {
			errs = append(errs, fmt.Errorf("crawler: distributed: the shared index has k = %d, the crawl's widest radius is %d", d.Index.K(), want))
		}
	}
	if _, ok := d.Queue.(FailedRetrier); o.RetryFailed && d.Queue != nil && !ok {
		errs = append(errs, errors.New("crawler: distributed: retrying failed URLs needs a shared frontier that can queue them again (FailedRetrier)"))
	}
	return errs
}

// distributed is the state of a worker of a distributed crawl.
type distributed struct {
	Distributed
	// nextID is the last page ID reserved: a page's ID is chosen before
	// its claim (the entry names it), so IDs of pages not stored are
	// skipped.
	nextID atomic.Uint64
	// exhausted is set once Budget refused a page.
	exhausted atomic.Bool

	mu sync.Mutex
	// recheck are claims confirmed once, to confirm again recheckAfter
	// later (recheckLoop): a confirm in the last second before a Redis
	// crash may be lost with its append-only file's last second.
	recheck []recheck
	// confirmed are page IDs confirmed twice whose claims are still
	// recorded in bClaims; the next commit (or the end of Run) deletes
	// them.
	confirmed []uint64
}

type recheck struct {
	id, seq uint64
	at      time.Time
}

// recheckAfter is how long after its confirm a claim is confirmed again:
// longer than the second of writes a Redis crash with appendfsync
// everysec may lose.
const recheckAfter = 2 * time.Second

// bClaims holds the claims of stored pages not yet known to be confirmed:
// page ID -> the entry's Seq (8 bytes, big endian).
var bClaims = []byte("shared-claims")

func (c *Crawler) openDistributed() error {
	c.dist = &distributed{Distributed: *c.opts.Distributed}
	c.queue = c.dist.Queue
	c.shortK = min(c.shortK, c.dist.Index.K()) // the shared layout may answer less than the local one
	return c.db.Update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(bClaims); err != nil {
			return fmt.Errorf("crawler: claims bucket: %w", err)
		}
		last, err := c.store.LastIDTx(tx)
		if err != nil {
			return fmt.Errorf("crawler: %w", err)
		}
		c.dist.nextID.Store(last)
		return nil
	})
}

// entryID names page id of this worker in the shared index.
func (c *Crawler) entryID(id uint64) string {
	return c.dist.Worker + "/" + strconv.FormatUint(id, 10)
}

// parseEntryID splits an entry ID into the worker and its page ID.
func parseEntryID(s string) (worker string, id uint64, err error) {
	i := strings.LastIndexByte(s, '/')
	if i < 0 {
		return "", 0, fmt.Errorf("crawler: shared entry id %q: want worker/page-id", s)
	}
	id, err = strconv.ParseUint(s[i+1:], 10, 64)
	if err != nil {
		return "", 0, fmt.Errorf("crawler: shared entry id %q: %w", s, err)
	}
	return s[:i], id, nil
}

func putClaimTx(tx *bolt.Tx, id, seq uint64) error {
	var k, v [8]byte
	binary.BigEndian.PutUint64(k[:], id)
	binary.BigEndian.PutUint64(v[:], seq)
	if err := tx.Bucket(bClaims).Put(k[:], v[:]); err != nil {
		return fmt.Errorf("record claim of page %d: %w", id, err)
	}
	return nil
}

// deleteConfirmedTx removes the claims confirmed since the last commit.
func (c *Crawler) deleteConfirmedTx(tx *bolt.Tx) error {
	c.dist.mu.Lock()
	ids := c.dist.confirmed
	c.dist.confirmed = nil
	c.dist.mu.Unlock()
	b := tx.Bucket(bClaims)
	for _, id := range ids {
		var k [8]byte
		binary.BigEndian.PutUint64(k[:], id)
		if err := b.Delete(k[:]); err != nil {
			return fmt.Errorf("delete claim of page %d: %w", id, err)
		}
	}
	return nil
}

// markConfirmed records that the claim seq of page id was confirmed
// (again, when again is set: its record may go).
func (c *Crawler) markConfirmed(id, seq uint64, again bool) {
	c.dist.mu.Lock()
	if again {
		c.dist.confirmed = append(c.dist.confirmed, id)
	} else {
		c.dist.recheck = append(c.dist.recheck, recheck{id: id, seq: seq, at: time.Now()})
	}
	c.dist.mu.Unlock()
}

// recheckLoop confirms again, once a second, the claims confirmed at least
// recheckAfter ago, all together (confirmAgain: one round trip to Redis
// for them all), until ctx ends; what it has not rechecked then stays
// recorded and the next Run confirms it. A claim whose first confirm a
// Redis crash lost is pending again in the restored index; the second
// confirm commits it before its lease ends, or finds it gone and claims
// it again (reclaim), so its copies are not stored beside it.
func (c *Crawler) recheckLoop(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c.dist.mu.Lock()
		i := 0
		for i < len(c.dist.recheck) && time.Since(c.dist.recheck[i].at) >= recheckAfter {
			i++
		}
		due := slices.Clone(c.dist.recheck[:i])
		c.dist.recheck = slices.Delete(c.dist.recheck, 0, i)
		c.dist.mu.Unlock()
		if len(due) == 0 {
			continue
		}
		if failed, err := c.confirmAgain(ctx, due); err != nil {
			if ctx.Err() == nil {
				c.opts.Logger.Warn("confirming claims again failed; the next run confirms them", "claims", len(failed), "error", err)
			}
			c.dist.mu.Lock()
			c.dist.recheck = append(failed, c.dist.recheck...)
			c.dist.mu.Unlock()
		}
	}
}

// confirmAgain confirms the claims rs a second time (see confirm): all in
// one call when the index is a contentseen.BatchConfirmer (one round trip
// for Redis), else one by one until one fails. It returns the claims not
// confirmed and the first error.
func (c *Crawler) confirmAgain(ctx context.Context, rs []recheck) ([]recheck, error) {
	b, ok := c.dist.Index.(contentseen.BatchConfirmer)
	if !ok {
		for j, r := range rs {
			if err := c.confirm(ctx, r.id, r.seq, true); err != nil {
				return rs[j:], err
			}
		}
		return nil, nil
	}
	claims := make([]contentseen.ClaimRef, len(rs))
	for i, r := range rs {
		claims[i] = contentseen.ClaimRef{Seq: r.seq, ID: c.entryID(r.id)}
	}
	errs := b.ConfirmBatch(ctx, claims)
	var failed []recheck
	var first error
	for i, r := range rs {
		if err := c.confirmed(ctx, r.id, r.seq, errs[i], true); err != nil {
			failed = append(failed, r)
			if first == nil {
				first = err
			}
		}
	}
	return failed, first
}

// flushConfirmed deletes the claims confirmed since the last commit.
func (c *Crawler) flushConfirmed() error {
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	if err := c.db.Update(c.deleteConfirmedTx); err != nil {
		return fmt.Errorf("crawler: %w", err)
	}
	return nil
}

// storedClaims returns the claims recorded in the data directory.
func (c *Crawler) storedClaims() (map[uint64]uint64, error) {
	claims := map[uint64]uint64{}
	err := c.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bClaims).ForEach(func(k, v []byte) error {
			if len(k) != 8 || len(v) != 8 {
				return fmt.Errorf("crawler: claims bucket: bad record %x", k)
			}
			claims[binary.BigEndian.Uint64(k)] = binary.BigEndian.Uint64(v)
			return nil
		})
	})
	return claims, err
}

// WorkerFile is the file in a data directory that records the name the
// directory's worker has in a distributed crawl.
const WorkerFile = "worker"

// WorkerName returns the name of dir's worker in a distributed crawl,
// creating dir and choosing the name on first use: the directory's base
// name (as a worker name may spell it) and 6 random hex digits, so that
// two machines' "data" directories get different names. The name is
// recorded in dir (WorkerFile) and stays the same for every later run,
// which is what lets a restarted worker confirm the claims it stored.
func WorkerName(dir string) (string, error) {
	path := filepath.Join(dir, WorkerFile)
	b, err := os.ReadFile(path)
	if err == nil {
		name := strings.TrimSpace(string(b))
		if !validWorker.MatchString(name) {
			return "", fmt.Errorf("crawler: %s: %q is not a worker name (letters, digits, '.', '_' or '-'): delete the file for a new one", path, name)
		}
		return name, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("crawler: worker name: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("crawler: worker name: %w", err)
	}
	base := strings.Trim(regexp.MustCompile(`[^A-Za-z0-9._-]+`).ReplaceAllString(filepath.Base(abs), "-"), "-.")
	if len(base) > 40 {
		base = base[:40]
	}
	if base == "" {
		base = "worker"
	}
	var rnd [3]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", fmt.Errorf("crawler: worker name: %w", err)
	}
	name := base + "-" + hex.EncodeToString(rnd[:])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("crawler: create data directory: %w", err)
	}
	if err := writeFileSync(path, []byte(name+"\n")); err != nil {
		return "", fmt.Errorf("crawler: record worker name: %w", err)
	}
	return name, nil
}

// writeFileSync writes path through a temporary file renamed over it, so
// a crash leaves the old content or the new, never half.
func writeFileSync(path string, b []byte) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		return errors.Join(err, f.Close())
	}
	if err := f.Sync(); err != nil {
		return errors.Join(err, f.Close())
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// CrawlFile is the file in a data directory that records the distributed
// crawl its worker belongs to: its crawl name and backend, one "key:
// value" line each (crawl_name, backend), as the config keys spell them.
const CrawlFile = "crawl-backend"

// DirCrawl returns the crawl name and backend recorded in dir (CrawlFile);
// ok is false when dir records none (it was never a worker's).
func DirCrawl(dir string) (name, backend string, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, CrawlFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, fmt.Errorf("crawler: read the data directory's crawl: %w", err)
	}
	for line := range strings.Lines(string(b)) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), ":")
		switch strings.TrimSpace(k) {
		case "crawl_name":
			name = strings.TrimSpace(v)
		case "backend":
			backend = strings.TrimSpace(v)
		}
	}
	if name == "" {
		return "", "", false, fmt.Errorf("crawler: %s names no crawl (want a line crawl_name: NAME)", filepath.Join(dir, CrawlFile))
	}
	return name, backend, true, nil
}

// CheckDirCrawl refuses dir for a worker of crawl name when dir records
// another crawl (DirCrawl): its pages would be stored twice, once in each
// crawl.
func CheckDirCrawl(dir, name string) error {
	had, backend, ok, err := DirCrawl(dir)
	if err != nil || !ok || had == name {
		return err
	}
	return fmt.Errorf("crawler: data directory %s belongs to crawl %q (on %s), not %q: give this worker another --data directory, or run it with --set crawl_name=%s",
		dir, had, backend, name, had)
}

// RecordDirCrawl records in dir, on a worker's first use of it, the crawl
// name and backend (an address without credentials) it works for; a dir
// that records them already is left as it is (see CheckDirCrawl).
func RecordDirCrawl(dir, name, backend string) error {
	if _, _, ok, err := DirCrawl(dir); err != nil || ok {
		return err
	}
	if err := writeFileSync(filepath.Join(dir, CrawlFile), []byte("crawl_name: "+name+"\nbackend: "+backend+"\n")); err != nil {
		return fmt.Errorf("crawler: record the data directory's crawl: %w", err)
	}
	return nil
}
