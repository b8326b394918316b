package crawler

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/storage"
)

// Stats is a snapshot of a Run's figures.
type Stats struct {
	// Fetched counts the pages received with a 2xx answer and read,
	// whatever was then decided (a noindex page is fetched, then skipped);
	// a 404 or a URL robots.txt disallows is decided without a fetch.
	// The other counts are outcomes: see Decided.
	Fetched, Stored, Thin, DroppedExact, DroppedNear int64
	Skipped, Errors, Retries                         int64
	InFlight                                         int64
	// Held counts pages fetched but left undecided for a later run: in a
	// crawl, those in flight when the page limit was reached; in a Dedup
	// summary, the records read but not decided (the page limit, or the
	// run was interrupted or failed). A rerun fetches or reads them again.
	Held    int64
	Queue   int // URLs pending in the frontier
	Elapsed time.Duration
}

// Stats returns the current figures of this run.
func (c *Crawler) Stats(start time.Time) Stats {
	fs := c.queue.Stats()
	return Stats{
		Fetched: c.stats.fetched.Load(), Stored: c.stats.stored.Load(), Thin: c.stats.thin.Load(),
		DroppedExact: c.stats.exact.Load(), DroppedNear: c.stats.near.Load(),
		Skipped: c.stats.skipped.Load(), Errors: c.stats.errors.Load(), Retries: c.stats.retries.Load(),
		InFlight: c.stats.inFlight.Load(), Held: c.stats.held.Load(), Queue: fs.Pending, Elapsed: time.Since(start),
	}
}

// Decided is how many URLs this run gave an outcome: stored, dropped,
// skipped (robots.txt, noindex, not HTML, a redirect, ...) or given up on
// (errors). A URL queued for a retry, or held at the page limit, is not
// decided yet; one retried and then decided counts once.
func (s Stats) Decided() int64 {
	return s.Stored + s.DroppedExact + s.DroppedNear + s.Skipped + s.Errors
}

func (s Stats) line() string {
	rate := 0.0
	if s.Elapsed > 0 {
		rate = float64(s.Fetched) / s.Elapsed.Seconds()
	}
	return fmt.Sprintf("fetched %d  stored %d  dropped %d exact / %d near  errors %d  queue %d  %.1f pages/s  %s",
		s.Fetched, s.Stored, s.DroppedExact, s.DroppedNear, s.Errors, s.Queue, rate,
		s.Elapsed.Truncate(time.Second))
}

// startStatus reports progress until the returned function is called, which
// waits for the reporter to stop: on a terminal a status line redrawn in
// place, otherwise a log line every StatusInterval.
func (c *Crawler) startStatus(start time.Time) (stop func()) {
	interval := c.opts.StatusInterval
	if c.opts.StatusTTY {
		interval = 250 * time.Millisecond
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				if c.opts.StatusTTY && c.opts.Status != nil {
					fmt.Fprintf(c.opts.Status, "\r\033[K")
				}
				return
			case <-t.C:
				s := c.Stats(start)
				switch {
				case c.opts.StatusTTY && c.opts.Status != nil:
					fmt.Fprintf(c.opts.Status, "\r\033[K%s", s.line())
				default:
					c.opts.Logger.Info("progress", "fetched", s.Fetched, "stored", s.Stored,
						"dropped_exact", s.DroppedExact, "dropped_near", s.DroppedNear,
						"errors", s.Errors, "queue", s.Queue, "in_flight", s.InFlight,
						"elapsed", s.Elapsed.Truncate(time.Second))
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// Summary is what a finished (or stopped) Run reports.
type Summary struct {
	Run          Stats          // this run only
	Pages, Drops int            // all stored pages and drops in the data directory
	Failed       int            // URLs recorded as failed
	TopDupHosts  []HostCount    // hosts that supplied the most duplicates, all runs
	DataDir      string         // where the store lives
	DropLog      string         // where the drop log is
	Frontier     frontier.Stats // the frontier at the end
	// PageLimit is MaxPages when the run stopped because that many pages
	// were stored, else 0.
	PageLimit int
	// RetriedFailed is how many failed URLs Options.RetryFailed queued
	// again. Run.Fetched counts those answering 2xx; the others are among
	// Run.Errors.
	RetriedFailed int
	// QueueLost is set when the shared frontier lost the crawl's keys
	// (a Redis back without its data): Frontier holds the last counts
	// known, not what is queued, and Print says so.
	QueueLost bool
	// Shared is set for a worker of a distributed crawl: Pages and Drops
	// are its own directory's, Failed and Frontier the whole crawl's (the
	// shared frontier's counts), and Print says which is which.
	Shared bool
}

// HostCount is a host and a count.
type HostCount struct {
	Host  string
	Count int
}

func (c *Crawler) summary(ctx context.Context, start time.Time) (*Summary, error) {
	ctx = context.WithoutCancel(ctx)
	s := &Summary{Run: c.Stats(start), DataDir: c.opts.DataDir, DropLog: c.opts.DropLog, Frontier: c.queue.Stats(),
		RetriedFailed: c.retriedFailed, Shared: c.dist != nil}
	var err error
	s.Pages, s.Drops, err = c.store.Counts(ctx)
	if err != nil {
		return nil, fmt.Errorf("crawler: summary: %w", err)
	}
	s.Failed = s.Frontier.Failed
	if c.maxPagesReached() {
		s.PageLimit = c.opts.MaxPages
	}
	hosts := map[string]int{}
	err = c.store.DropHeaders(ctx, func(d *storage.Drop) error {
		hosts[frontier.HostKey(d.URL)]++
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("crawler: summary: %w", err)
	}
	for h, n := range hosts {
		s.TopDupHosts = append(s.TopDupHosts, HostCount{h, n})
	}
	sort.Slice(s.TopDupHosts, func(i, j int) bool {
		a, b := s.TopDupHosts[i], s.TopDupHosts[j]
		return a.Count > b.Count || a.Count == b.Count && a.Host < b.Host
	})
	if len(s.TopDupHosts) > 5 {
		s.TopDupHosts = s.TopDupHosts[:5]
	}
	return s, nil
}

// Print writes the summary for a person.
func (s *Summary) Print(w io.Writer) {
	r := s.Run
	held := ""
	if r.Held > 0 {
		held = fmt.Sprintf(", %d more fetched but left queued at the page limit", r.Held)
	}
	// The parts of "decided" add up to it; "fetched" is another count (a
	// 404 or a robots.txt skip is decided unfetched, a noindex page is
	// fetched, then skipped), so it is named for what it counts.
	fmt.Fprintf(w, "This run: decided %d URL%s = stored %d (%d thin) + dropped %d exact + %d near + skipped %d + errors %d; fetched %d (pages received with a 2xx answer), retries %d%s in %s\n",
		r.Decided(), plural(int(r.Decided())), r.Stored, r.Thin, r.DroppedExact, r.DroppedNear, r.Skipped, r.Errors,
		r.Fetched, r.Retries, held, r.Elapsed.Truncate(time.Millisecond))
	total := s.Pages + s.Drops
	rate := 0.0
	if total > 0 {
		rate = 100 * float64(s.Drops) / float64(total)
	}
	queued := strconv.Itoa(s.Frontier.Pending + s.Frontier.InFlight)
	if s.QueueLost {
		queued = "unknown (the shared frontier's keys are gone)"
	}
	if s.Shared {
		fmt.Fprintf(w, "All runs of this worker: %d page%s stored, %d dropped as duplicates (drop rate %.1f%%); the whole crawl: URLs failed: %d, still queued: %s\n",
			s.Pages, plural(s.Pages), s.Drops, rate, s.Failed, queued)
	} else {
		fmt.Fprintf(w, "All runs: %d page%s stored, %d dropped as duplicates (drop rate %.1f%%); URLs failed: %d, still queued: %s\n",
			s.Pages, plural(s.Pages), s.Drops, rate, s.Failed, queued)
	}
	if s.RetriedFailed > 0 {
		fmt.Fprintf(w, "--retry-failed: %d URL%s that had failed requested again; those failing again are among this run's errors (crawl failed lists them)\n",
			s.RetriedFailed, plural(s.RetriedFailed))
	}
	if s.PageLimit > 0 {
		fmt.Fprintf(w, "Stopped at the page limit (scope.max_pages = %d stored page%s); raise it and rerun to continue.\n", s.PageLimit, plural(s.PageLimit))
	}
	if len(s.TopDupHosts) > 0 {
		var parts []string
		for _, h := range s.TopDupHosts {
			parts = append(parts, fmt.Sprintf("%s (%d)", h.Host, h.Count))
		}
		fmt.Fprintf(w, "Hosts with most duplicates: %s\n", strings.Join(parts, ", "))
	}
	fmt.Fprintf(w, "Store: %s/%s\nDrop log: %s\n", s.DataDir, DBFile, s.DropLog)
}

// plural is "s" unless n is 1, for "%d page%s".
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
