package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/storage"
)

// statsJSON is the output of `crawl stats --json`. The field names are a
// user contract. Histograms have 65 entries: index = distance in bits.
type statsJSON struct {
	Stored       int `json:"stored"` // all stored pages, thin included
	Thin         int `json:"thin"`   // stored, too little text to fingerprint
	DroppedExact int `json:"dropped_exact"`
	DroppedNear  int `json:"dropped_near"`
	Failed       int `json:"failed"`  // URLs given up on
	Skipped      int `json:"skipped"` // URLs neither stored nor dropped (crawl failed --skipped lists them)
	Pending      int `json:"pending"` // URLs still queued (a resumed crawl fetches them)
	// SharedFrontier, for the directories of workers of a distributed
	// crawl, names where their queue is: the shared frontier (crawl
	// "NAME" at BACKEND), which Pending does not count.
	SharedFrontier string  `json:"shared_frontier,omitempty"`
	DropRate       float64 `json:"drop_rate"` // dropped / (stored + dropped)
	K              int     `json:"k"`         // the threshold of the last crawl (else the configured one)
	KSource        string  `json:"-"`
	Features       string  `json:"features"` // the feature scheme the index was built with
	Layout         string  `json:"layout"`   // the index's table layout (crawl index migrate changes it)

	Hosts []hostStatsJSON `json:"hosts"` // the hosts with the most drops, at most 10

	NearDropDistances []int `json:"near_drop_distances"`
	// NearDropSimilarities counts near drops by verified similarity in
	// twentieths: [i] holds similarities in [i/20, (i+1)/20), [20] exactly
	// 1; near drops recorded before the judge verified them are counted in
	// NearDropsUnverified instead.
	NearDropSimilarities []int `json:"near_drop_similarities"`
	NearDropsUnverified  int   `json:"near_drops_unverified"`
	// NearestNeighbourDistances counts stored non-thin pages by the
	// distance to their nearest other stored non-thin page.
	NearestNeighbourDistances []int `json:"nearest_neighbour_distances"`
	NearestNeighbourPages     int   `json:"nearest_neighbour_pages"` // non-thin stored pages searched
	Sampled                   bool  `json:"sampled"`                 // only a sample of them was examined

	// DataDirs lists the directories read, with their own counts, when
	// several were (the workers of a distributed crawl); the figures
	// above are their sums, merged.
	DataDirs []dirStatsJSON `json:"data_dirs,omitempty"`
	// Notes say where the directories disagree on what the figures assume
	// (features, layout, k): then they are not one crawl's.
	Notes []string `json:"notes,omitempty"`
}

// dirStatsJSON is one directory's share of `crawl stats --data A --data B`.
type dirStatsJSON struct {
	Data         string `json:"data"` // as given to --data
	Stored       int    `json:"stored"`
	Thin         int    `json:"thin"`
	DroppedExact int    `json:"dropped_exact"`
	DroppedNear  int    `json:"dropped_near"`
	Failed       int    `json:"failed"`
	Skipped      int    `json:"skipped"`
	Pending      int    `json:"pending"`
}

type hostStatsJSON struct {
	Host     string  `json:"host"`
	Stored   int     `json:"stored"`
	Dropped  int     `json:"dropped"`
	DropRate float64 `json:"drop_rate"`
}

const statsTopHosts = 10

func (m *Main) runStats(ctx context.Context, args []string) (err error) {
	fset := m.newFlagSet("stats")
	usage := fset.Usage
	fset.Usage = func() {
		usage()
		fmt.Fprintf(fset.Output(), "\n%s", statsHelp)
	}
	asJSON := fset.Bool("json", false, "print the figures as one JSON object (fields listed below)")
	var cf configFlags
	m.addReadFlags(fset, &cf)
	if err := fset.Parse(args); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		return usageErrorf(fset, "stats: unexpected argument %q", fset.Arg(0))
	}
	set, cfg, err := m.openDataSet(fset, cf, "stats")
	if err != nil {
		return err
	}
	defer func() {
		if cerr := set.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("stats: close: %w", cerr)
		}
	}()
	defer set.Recover(&err)
	s, err := collectStats(ctx, set)
	if err != nil {
		return fmt.Errorf("stats: %w", err)
	}
	if err := statsK(set, s, cfg.ContentSeen.K); err != nil {
		return fmt.Errorf("stats: %w", err)
	}
	bw := bufio.NewWriter(m.Stdout)
	if *asJSON {
		enc := json.NewEncoder(bw)
		enc.SetIndent("", "  ")
		if err := enc.Encode(s); err != nil {
			return fmt.Errorf("stats: %w", err)
		}
	} else {
		writeStats(bw, s)
	}
	return bw.Flush()
}

const statsHelp = `The nearest-neighbour histogram is for choosing k: duplicates sit at small distances (the near
drops), distinct pages far away (about 32 bits for unrelated texts, less for pages on one template).
A good k lies in the valley between the two; stored pages just above k are near-duplicates the
crawl kept, drops just below k may be distinct pages that collided (check with crawl dups show).
Up to 20,000 stored pages every page is compared with every other; above that a sample of 2,000
pages is compared with all, and the output says "sampled".

JSON fields: stored, thin, dropped_exact, dropped_near, failed, skipped, pending, drop_rate, k, features,
layout, hosts [{host, stored, dropped, drop_rate}], near_drop_distances and nearest_neighbour_distances
(65 counts each, index = distance in bits), nearest_neighbour_pages, sampled; with several --data also
data_dirs [{data, stored, thin, dropped_exact, dropped_near, failed, skipped, pending}] (the figures
above are their sums) and notes (where the directories disagree on features, layout or k).

Several --data (the directories of the workers of one distributed crawl) are read as one crawl: counts
are summed, histograms merged, hosts combined, and nearest neighbours searched across all of them.
`

// statsK sets s.K to the k the first directory recorded (else the
// configuration's, def), noting directories that recorded another.
func statsK(set *crawler.DataSet, s *statsJSON, def int) error {
	s.K, s.KSource = def, "the configuration"
	from := ""
	return set.Each(func(_ int, d *crawler.Data) error {
		k, ok, err := d.K()
		switch {
		case err != nil:
			return err
		case !ok:
		case from == "":
			s.K, s.KSource, from = k, "the last crawl or dedup run", d.Dir
			if len(set.Dirs) > 1 {
				s.KSource += " of " + d.Dir
			}
		case k != s.K:
			s.Notes = append(s.Notes, fmt.Sprintf("%s was last crawled with k = %d, %s with k = %d", d.Dir, k, from, s.K))
		}
		return nil
	})
}

// collectStats reads every directory of set and sums (merges) their
// figures: one crawl's.
func collectStats(ctx context.Context, set *crawler.DataSet) (*statsJSON, error) {
	s := &statsJSON{NearDropDistances: make([]int, 65), NearestNeighbourDistances: make([]int, 65), NearDropSimilarities: make([]int, 21)}
	type hostCount struct{ stored, dropped int }
	hosts := map[string]*hostCount{}
	host := func(u string) *hostCount {
		h := frontier.HostKey(u)
		if hosts[h] == nil {
			hosts[h] = &hostCount{}
		}
		return hosts[h]
	}
	var fps []contentseen.Fingerprint
	var sharedAt []string
	metaFrom := ""
	err := set.Each(func(_ int, data *crawler.Data) error {
		ds := dirStatsJSON{Data: data.Dir}
		fs, err := data.FrontierStats()
		if err != nil {
			return err
		}
		ds.Failed, ds.Pending = fs.Failed, fs.Pending+fs.InFlight
		shared, err := sharedFrontier(data.Dir)
		if err != nil {
			return err
		}
		if shared != "" && !slices.Contains(sharedAt, shared) {
			sharedAt = append(sharedAt, shared)
		}
		if err := data.Skipped(func(string, string) error { ds.Skipped++; return nil }); err != nil {
			return err
		}
		layout, features, err := data.IndexMeta()
		if err != nil {
			return err
		}
		switch {
		case features == "":
		case metaFrom == "":
			s.Layout, s.Features, metaFrom = layout, features, data.Dir
		case features != s.Features || layout != s.Layout:
			s.Notes = append(s.Notes, fmt.Sprintf("%s has features %s and layout %s, %s features %s and layout %s",
				data.Dir, features, layout, metaFrom, s.Features, s.Layout))
		}
		if err := data.Store.PageHeaders(ctx, func(p *storage.Page) error {
			ds.Stored++
			host(p.URL).stored++
			if p.Thin {
				ds.Thin++
			} else {
				fps = append(fps, contentseen.Fingerprint(p.Fingerprint))
			}
			return nil
		}); err != nil {
			return err
		}
		if err := data.Store.DropHeaders(ctx, func(d *storage.Drop) error {
			host(d.URL).dropped++
			if d.Reason == storage.ReasonExact {
				ds.DroppedExact++
				return nil
			}
			ds.DroppedNear++
			s.NearDropDistances[min(max(d.Distance, 0), 64)]++
			if d.Similarity == 0 && d.Containment == 0 {
				s.NearDropsUnverified++
			} else {
				s.NearDropSimilarities[min(max(int(d.Similarity*20), 0), 20)]++
			}
			return nil
		}); err != nil {
			return err
		}
		s.Stored += ds.Stored
		s.Thin += ds.Thin
		s.DroppedExact += ds.DroppedExact
		s.DroppedNear += ds.DroppedNear
		s.Failed += ds.Failed
		s.Skipped += ds.Skipped
		s.Pending += ds.Pending
		s.DataDirs = append(s.DataDirs, ds)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(s.DataDirs) == 1 {
		s.DataDirs = nil // one directory: its figures are the totals
	}
	s.SharedFrontier = strings.Join(sharedAt, "; ")
	s.DropRate = rate(s.DroppedExact+s.DroppedNear, s.Stored)
	for h, c := range hosts {
		if c.dropped > 0 {
			s.Hosts = append(s.Hosts, hostStatsJSON{Host: h, Stored: c.stored, Dropped: c.dropped, DropRate: rate(c.dropped, c.stored)})
		}
	}
	sort.Slice(s.Hosts, func(i, j int) bool {
		a, b := s.Hosts[i], s.Hosts[j]
		return a.Dropped > b.Dropped || a.Dropped == b.Dropped && a.Host < b.Host
	})
	if len(s.Hosts) > statsTopHosts {
		s.Hosts = s.Hosts[:statsTopHosts]
	}
	if s.Hosts == nil {
		s.Hosts = []hostStatsJSON{}
	}
	nn, err := crawler.NearestNeighbours(ctx, fps)
	if err != nil {
		return nil, err
	}
	for _, d := range nn.Distances {
		s.NearestNeighbourDistances[d]++
	}
	s.NearestNeighbourPages, s.Sampled = nn.Pages, nn.Sampled
	return s, nil
}

func rate(dropped, stored int) float64 {
	if dropped+stored == 0 {
		return 0
	}
	return float64(dropped) / float64(dropped+stored)
}

func writeStats(w io.Writer, s *statsJSON) {
	if len(s.DataDirs) > 0 {
		fmt.Fprintf(w, "Data     %d directories, read as one crawl:\n", len(s.DataDirs))
		for _, d := range s.DataDirs {
			fmt.Fprintf(w, "  %-40s %6d stored %6d dropped %6d failed %6d skipped %6d pending\n",
				d.Data, d.Stored, d.DroppedExact+d.DroppedNear, d.Failed, d.Skipped, d.Pending)
		}
		for _, n := range s.Notes {
			fmt.Fprintf(w, "  note: %s: the figures below mix them\n", n)
		}
	}
	fmt.Fprintf(w, "Stored   %d page%s (%d thin: too little text to fingerprint)\n", s.Stored, plural(s.Stored), s.Thin)
	fmt.Fprintf(w, "Dropped  %d exact + %d near = %d (drop rate %.1f%%)\n",
		s.DroppedExact, s.DroppedNear, s.DroppedExact+s.DroppedNear, 100*s.DropRate)
	fmt.Fprintf(w, "Failed   %d URL%s\nSkipped  %d URL%s (robots.txt, not HTML, noindex, redirects: crawl failed --skipped)\n",
		s.Failed, plural(s.Failed), s.Skipped, plural(s.Skipped))
	if s.SharedFrontier != "" {
		fmt.Fprintf(w, "Pending  held by the shared frontier of %s (a worker's summary says how many are still queued)\n", s.SharedFrontier)
	} else {
		fmt.Fprintf(w, "Pending  %d URL%s\n", s.Pending, plural(s.Pending))
	}
	if s.Features != "" {
		fmt.Fprintf(w, "Features %s; layout %s; k = %d (from %s)\n", s.Features, s.Layout, s.K, s.KSource)
	}
	if len(s.Hosts) > 0 {
		fmt.Fprintf(w, "\nDrop rate by host (top %d by drops):\n", statsTopHosts)
		for _, h := range s.Hosts {
			fmt.Fprintf(w, "  %-40s %6d dropped %6d stored  %5.1f%%\n", h.Host, h.Dropped, h.Stored, 100*h.DropRate)
		}
	}
	fmt.Fprintf(w, "\nNear drops by distance in bits (%d):\n", s.DroppedNear)
	writeHistogram(w, s.NearDropDistances, s.K)
	fmt.Fprintf(w, "\nNear drops by verified similarity (Jaccard of word 3-shingles; below 0.60 verified by containment):\n")
	writeSimilarities(w, s.NearDropSimilarities)
	if s.NearDropsUnverified > 0 {
		fmt.Fprintf(w, "  and %d near drop%s recorded before drops were verified\n", s.NearDropsUnverified, plural(s.NearDropsUnverified))
	}
	what := "every stored page"
	if s.Sampled {
		what = fmt.Sprintf("sampled: %d of them", sum(s.NearestNeighbourDistances))
	}
	fmt.Fprintf(w, "\nStored non-thin pages by distance to their nearest neighbour in bits (%d page%s, %s):\n",
		s.NearestNeighbourPages, plural(s.NearestNeighbourPages), what)
	writeHistogram(w, s.NearestNeighbourDistances, s.K)
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// writeHistogram prints one bar per distance from the smallest to the
// largest one counted (zeros in between kept: the valley is the point),
// scaled to 50 columns, with k marked.
func writeHistogram(w io.Writer, counts []int, k int) {
	lo, hi, top := -1, -1, 0
	for d, n := range counts {
		if n > 0 {
			if lo < 0 {
				lo = d
			}
			hi = d
			top = max(top, n)
		}
	}
	if lo < 0 {
		fmt.Fprintln(w, "  (none)")
		return
	}
	if k >= 0 && k < len(counts) {
		lo, hi = min(lo, k), max(hi, k)
	}
	for d := lo; d <= hi; d++ {
		n := counts[d]
		bar := strings.Repeat("#", (n*50+top-1)/top)
		mark := ""
		if d == k {
			mark = "  <- k"
		}
		fmt.Fprintf(w, "  %2d | %-50s %d%s\n", d, bar, n, mark)
	}
}

// writeSimilarities prints one bar per twentieth of similarity that holds
// drops, from the lowest to 1.
func writeSimilarities(w io.Writer, counts []int) {
	lo, top := -1, 0
	for i, n := range counts {
		if n > 0 && lo < 0 {
			lo = i
		}
		top = max(top, n)
	}
	if lo < 0 {
		fmt.Fprintln(w, "  (none)")
		return
	}
	for i := lo; i < len(counts); i++ {
		n := counts[i]
		label := fmt.Sprintf("%.2f", float64(i)/20)
		if i == 20 {
			label = "1   "
		}
		fmt.Fprintf(w, "  %s | %-50s %d\n", label, strings.Repeat("#", (n*50+top-1)/top), n)
	}
}

// sharedFrontier names, for the data directory of a worker of a
// distributed crawl, the shared frontier holding its crawl's queue
// (crawl "NAME" at BACKEND); "" for another directory.
func sharedFrontier(dir string) (string, error) {
	name, backend, ok, err := crawler.DirCrawl(dir)
	if err != nil {
		return "", err
	}
	if ok {
		return fmt.Sprintf("crawl %q at %s", name, backend), nil
	}
	if _, err := os.Stat(filepath.Join(dir, crawler.WorkerFile)); err == nil {
		return "its crawl (not recorded in " + dir + ")", nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("stats: %w", err)
	}
	return "", nil
}
