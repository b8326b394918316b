package webview

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
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
	dirs                      []dirCounts // per source, in order
	elsewhere                 int         // drops of pages no source stores

	pages    []map[uint64]pageHead // per source: stored pages with drops, by ID
	drops    []dropHead            // every drop, by source then drop ID
	clusters []cluster             // every stored page with drops, by source then page ID; then pages no source stores, by URL
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

// dirCounts is one source's own counts, for the overview of several.
type dirCounts struct {
	Dir                       string
	Stored, Thin, Exact, Near int
	Failed, Skipped, Pending  int
}

type dropHead struct {
	Src                int
	ID                 uint64
	URL, Title, Host   string
	DupOf              uint64
	DupOfURL           string // the page's URL when another worker stored it (storage.Drop.DuplicateOfURL)
	Distance           int
	Reason             string
	FP, MatchedFP      uint64
	Similarity         float64 // the verified similarity and containment, when HasSimilarity
	Containment        float64
	HasSimilarity      bool // recorded by a crawl that verifies drops (older drops have none)
	FetchedAt          time.Time
	lowerURL, lowerTit string // for the search box
}

// cluster is a stored page and its drops, from any source: page Page of
// source Src, or, when Elsewhere is set, the page the drops name by that
// URL, which no source stores (a worker's directory was not given).
type cluster struct {
	Src       int
	Page      uint64
	Elsewhere string
	drops     []int // indexes into snapshot.drops, in order
}

// clusterKey is what cluster identifies.
type clusterKey struct {
	page      crawler.PageRef
	elsewhere string
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

// build reads every source into a new snapshot, as one crawl: a drop
// joins the cluster of the page it duplicates in whichever source stores
// it (set.KeptPage, called under setMu: a DataSet is for one goroutine).
// defaultK is used when no source records the k its drops were judged
// with.
func build(ctx context.Context, set *crawler.DataSet, setMu *sync.Mutex, defaultK int) (*snapshot, error) {
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
	byKey := map[clusterKey][]int{}
	for src, d := range set.Dirs {
		dc := dirCounts{Dir: d.Dir}
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
		dc.Pending = fs.Pending + fs.InFlight
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
			dc.Failed++
			return nil
		}); err != nil {
			return nil, fmt.Errorf("webview: %s: %w", d.Dir, err)
		}
		if err := d.Skipped(func(url, reason string) error {
			s.skips = append(s.skips, skipRow{Src: src, URL: url, Reason: reason})
			dc.Skipped++
			return nil
		}); err != nil {
			return nil, fmt.Errorf("webview: %s: %w", d.Dir, err)
		}

		// Drops first: then the page headers keep only the pages that
		// head a cluster.
		var foreign []int // drops naming their page by URL, resolved after the scan
		if err := d.Store.DropHeaders(ctx, func(dr *storage.Drop) error {
			h := frontier.HostKey(dr.URL)
			host(h).Dropped++
			dropHosts[h] = true
			if dr.Reason == storage.ReasonExact {
				dc.Exact++
			} else {
				dc.Near++
				s.nearHist[min(max(dr.Distance, 0), 64)]++
			}
			times = append(times, dr.FetchedAt)
			if dr.DuplicateOfURL != "" {
				foreign = append(foreign, len(s.drops))
			} else {
				k := clusterKey{page: crawler.PageRef{Dir: src, ID: dr.DuplicateOf}}
				byKey[k] = append(byKey[k], len(s.drops))
			}
			s.drops = append(s.drops, newDropHead(src, dr, h))
			return nil
		}); err != nil {
			return nil, fmt.Errorf("webview: %s: %w", d.Dir, err)
		}
		// Outside the scan's transaction: KeptPage opens its own, and a
		// read transaction nested in another can wait forever on a live
		// crawl's commit.
		resolved := map[string]clusterKey{} // by URL, for this source
		for _, di := range foreign {
			dh := &s.drops[di]
			k, done := resolved[dh.DupOfURL]
			if !done {
				setMu.Lock()
				ref, ok, err := set.KeptPage(src, &storage.Drop{DuplicateOf: dh.DupOf, DuplicateOfURL: dh.DupOfURL})
				setMu.Unlock()
				if err != nil {
					return nil, fmt.Errorf("webview: %w", err)
				}
				k = clusterKey{page: ref}
				if !ok {
					k = clusterKey{page: crawler.PageRef{Dir: len(set.Dirs)}, elsewhere: dh.DupOfURL}
				}
				resolved[dh.DupOfURL] = k
			}
			if k.elsewhere != "" {
				s.elsewhere++
			}
			byKey[k] = append(byKey[k], di)
		}
		s.dirs = append(s.dirs, dc)
	}
	for src, d := range set.Dirs {
		dc := &s.dirs[src]
		pages := map[uint64]pageHead{}
		if err := d.Store.PageHeaders(ctx, func(p *storage.Page) error {
			dc.Stored++
			host(frontier.HostKey(p.URL)).Stored++
			times = append(times, p.FetchedAt)
			if p.Thin {
				dc.Thin++
			} else {
				fps = append(fps, contentseen.Fingerprint(p.Fingerprint))
			}
			if _, ok := byKey[clusterKey{page: crawler.PageRef{Dir: src, ID: p.ID}}]; ok {
				pages[p.ID] = pageHead{URL: p.URL, Title: p.Title, FP: p.Fingerprint, lowerURL: lower(p.URL), lowerTit: lower(p.Title)}
			}
			return nil
		}); err != nil {
			return nil, fmt.Errorf("webview: %s: %w", d.Dir, err)
		}
		s.pages = append(s.pages, pages)
		s.stored, s.thin, s.exact, s.near = s.stored+dc.Stored, s.thin+dc.Thin, s.exact+dc.Exact, s.near+dc.Near
		s.pending += dc.Pending
	}
	keys := make([]clusterKey, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b clusterKey) int {
		return cmp.Or(cmp.Compare(a.page.Dir, b.page.Dir), cmp.Compare(a.page.ID, b.page.ID), cmp.Compare(a.elsewhere, b.elsewhere))
	})
	for _, k := range keys {
		drops := byKey[k]
		slices.Sort(drops) // a source's own drops, then those of later sources
		src := k.page.Dir
		if k.elsewhere != "" {
			src = -1
		}
		s.clusters = append(s.clusters, cluster{Src: src, Page: k.page.ID, Elsewhere: k.elsewhere, drops: drops})
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
		Src: src, ID: d.ID, URL: d.URL, Title: d.Title, Host: host, DupOf: d.DuplicateOf, DupOfURL: d.DuplicateOfURL,
		Distance: d.Distance, Reason: d.Reason, FP: d.Fingerprint, MatchedFP: d.MatchedFingerprint,
		FetchedAt: d.FetchedAt, Similarity: d.Similarity, Containment: d.Containment,
		HasSimilarity: d.Similarity > 0 || d.Containment > 0,
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
