package webview

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/storage"
)

// snapshot is what the list pages show, read once from the data
// directories (at start, or again when a live crawl's copy is older than
// Options.Refresh) so that each request filters and pages through memory
// instead of scanning the store: about 200 bytes a drop and 100 a page.
// A snapshot is never modified after build returns, so requests share it
// without locks.
type snapshot struct {
	built     time.Time
	buildTime time.Duration

	k        int
	kKnown   bool // k read from the data directory (else Options.K)
	features string
	layout   string

	stored, thin, exact, near int
	failed, skipped, pending  int

	pages    []map[uint64]pageHead // per source: stored pages with drops, by ID
	drops    []dropHead            // every drop, by source then drop ID
	clusters []cluster             // every stored page with drops, by source then page ID
	hosts    []hostRow             // by host name
	hostKeys []string              // hosts with drops, for the filter

	timeline []rateBin // pages (stored or dropped) fetched per bin over the crawl
	binWidth time.Duration
	nearHist [65]int // near drops by distance
	nnHist   [65]int // stored non-thin pages by distance to their nearest neighbour
	nnPages  int
	sampled  bool

	failures []failRow
	skips    []skipRow
}

type pageHead struct {
	URL, Title         string
	FP                 uint64
	lowerURL, lowerTit string // for the search box
}

type dropHead struct {
	Src                int
	ID                 uint64
	URL, Title, Host   string
	DupOf              uint64
	Distance           int
	Reason             string
	FP, MatchedFP      uint64
	Similarity         float64 // the verified similarity, when HasSimilarity
	HasSimilarity      bool
	FetchedAt          time.Time
	lowerURL, lowerTit string // for the search box
}

type cluster struct {
	Src   int
	Page  uint64
	drops []int // indexes into snapshot.drops
}

type hostRow struct {
	Host                            string
	Queued, Stored, Dropped, Failed int
}

type rateBin struct {
	Start time.Time
	Pages int
}

type failRow struct {
	Src      int
	URL      string
	Reason   string
	Attempts int
	Depth    int
}

type skipRow struct {
	Src         int
	URL, Reason string
}

// timelineBins is how many bars the pages-per-second chart has at most.
const timelineBins = 60

// build reads every source into a new snapshot. defaultK is used when no
// source records the k its drops were judged with.
func build(ctx context.Context, srcs []*crawler.Data, defaultK int) (*snapshot, error) {
	start := time.Now()
	s := &snapshot{k: defaultK}
	hosts := map[string]*hostRow{}
	host := func(h string) *hostRow {
		if hosts[h] == nil {
			hosts[h] = &hostRow{Host: h}
		}
		return hosts[h]
	}
	var fps []contentseen.Fingerprint
	var times []time.Time
	dropHosts := map[string]bool{}
	for src, d := range srcs {
		if k, ok, err := d.K(); err != nil {
			return nil, err
		} else if ok && !s.kKnown {
			s.k, s.kKnown = k, true
		}
		layout, features, err := d.IndexMeta()
		if err != nil {
			return nil, err
		}
		if s.features == "" {
			s.layout, s.features = layout, features
		}
		fs, err := d.FrontierStats()
		if err != nil {
			return nil, fmt.Errorf("webview: %s: %w", d.Dir, err)
		}
		s.pending += fs.Pending + fs.InFlight
		queued, err := d.Queued()
		if err != nil {
			return nil, fmt.Errorf("webview: %s: %w", d.Dir, err)
		}
		for h, n := range queued {
			host(h).Queued += n
		}
		if err := d.FailedItems(func(it frontier.Item) error {
			s.failures = append(s.failures, failRow{Src: src, URL: it.URL, Reason: it.LastError, Attempts: it.Attempts, Depth: it.Depth})
			host(frontier.HostKey(it.URL)).Failed++
			return nil
		}); err != nil {
			return nil, fmt.Errorf("webview: %s: %w", d.Dir, err)
		}
		if err := d.Skipped(func(url, reason string) error {
			s.skips = append(s.skips, skipRow{Src: src, URL: url, Reason: reason})
			return nil
		}); err != nil {
			return nil, fmt.Errorf("webview: %s: %w", d.Dir, err)
		}

		// Drops first: then the page headers keep only the pages that
		// head a cluster.
		byPage := map[uint64][]int{}
		if err := d.Store.DropHeaders(ctx, func(dr *storage.Drop) error {
			h := frontier.HostKey(dr.URL)
			host(h).Dropped++
			dropHosts[h] = true
			if dr.Reason == storage.ReasonExact {
				s.exact++
			} else {
				s.near++
				s.nearHist[min(max(dr.Distance, 0), 64)]++
			}
			times = append(times, dr.FetchedAt)
			byPage[dr.DuplicateOf] = append(byPage[dr.DuplicateOf], len(s.drops))
			s.drops = append(s.drops, newDropHead(src, dr, h))
			return nil
		}); err != nil {
			return nil, fmt.Errorf("webview: %s: %w", d.Dir, err)
		}
		pages := make(map[uint64]pageHead, len(byPage))
		if err := d.Store.PageHeaders(ctx, func(p *storage.Page) error {
			s.stored++
			host(frontier.HostKey(p.URL)).Stored++
			times = append(times, p.FetchedAt)
			if p.Thin {
				s.thin++
			} else {
				fps = append(fps, contentseen.Fingerprint(p.Fingerprint))
			}
			if _, ok := byPage[p.ID]; ok {
				pages[p.ID] = pageHead{URL: p.URL, Title: p.Title, FP: p.Fingerprint, lowerURL: lower(p.URL), lowerTit: lower(p.Title)}
			}
			return nil
		}); err != nil {
			return nil, fmt.Errorf("webview: %s: %w", d.Dir, err)
		}
		s.pages = append(s.pages, pages)
		ids := make([]uint64, 0, len(byPage))
		for id := range byPage {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		for _, id := range ids {
			s.clusters = append(s.clusters, cluster{Src: src, Page: id, drops: byPage[id]})
		}
	}
	s.failed = len(s.failures)
	s.skipped = len(s.skips)
	for _, h := range hosts {
		s.hosts = append(s.hosts, *h)
	}
	sort.Slice(s.hosts, func(i, j int) bool { return s.hosts[i].Host < s.hosts[j].Host })
	for h := range dropHosts {
		s.hostKeys = append(s.hostKeys, h)
	}
	sort.Strings(s.hostKeys)
	s.timeline, s.binWidth = timeline(times, timelineBins)
	nn, err := crawler.NearestNeighbours(ctx, fps)
	if err != nil {
		return nil, err
	}
	for _, d := range nn.Distances {
		s.nnHist[d]++
	}
	s.nnPages, s.sampled = nn.Pages, nn.Sampled
	s.built = time.Now()
	s.buildTime = s.built.Sub(start)
	return s, nil
}

func newDropHead(src int, d *storage.Drop, host string) dropHead {
	h := dropHead{
		Src: src, ID: d.ID, URL: d.URL, Title: d.Title, Host: host, DupOf: d.DuplicateOf,
		Distance: d.Distance, Reason: d.Reason, FP: d.Fingerprint, MatchedFP: d.MatchedFingerprint,
		FetchedAt: d.FetchedAt,
	}
	h.lowerURL, h.lowerTit = lower(d.URL), lower(d.Title)
	return h
}

// timeline counts times into at most n equal bins, at least a second
// wide, from the first to the last (zero times ignored).
func timeline(times []time.Time, n int) ([]rateBin, time.Duration) {
	var lo, hi time.Time
	for _, t := range times {
		if t.IsZero() {
			continue
		}
		if lo.IsZero() || t.Before(lo) {
			lo = t
		}
		if hi.IsZero() || t.After(hi) {
			hi = t
		}
	}
	if lo.IsZero() {
		return nil, 0
	}
	span := hi.Sub(lo)
	width := max(time.Second, (span+time.Duration(n)-1)/time.Duration(n))
	bins := make([]rateBin, int(span/width)+1)
	for i := range bins {
		bins[i].Start = lo.Add(time.Duration(i) * width)
	}
	for _, t := range times {
		if !t.IsZero() {
			bins[int(t.Sub(lo)/width)].Pages++
		}
	}
	return bins, width
}

func lower(s string) string { return strings.ToLower(s) }
