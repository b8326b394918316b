package webview

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/internal/worddiff"
	"github.com/simcrawl/simcrawl/storage"
)

// Page sizes of the paginated lists.
const (
	clustersPerPage   = 20
	dropsPerCluster   = 20 // a cluster shows this many drops, then "N more"
	hostsOnOverview   = 100
	failuresPerPage   = 100
	maxLabelsPerFile  = 10000
	featuresPerSide   = 10
	maxSearchQueryLen = 500
)

type overviewData struct {
	Sources                          []string
	Dirs                             []dirCounts // each source's own counts, when there are several
	Stored, Thin, Exact, Near        int
	Failed, Skipped, Pending         int
	DropRate                         string
	Run                              *crawler.Stats
	RunRate                          string
	K                                int
	KKnown                           bool
	Features, Layout                 string
	Chart                            chart
	Hosts                            []hostView
	MoreHosts                        int
	Config                           string
	BuildTime                        time.Duration
	TimelineFrom, TimelineTo, BinLen string
}

type hostView struct {
	hostRow
	Delay string // "" when not known (a stopped crawl)
}

func (s *Server) overview(w http.ResponseWriter, r *http.Request) {
	snap, err := s.snapshot(r.Context())
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	d := overviewData{
		Stored: snap.stored, Thin: snap.thin, Exact: snap.exact, Near: snap.near,
		Failed: snap.failed, Skipped: snap.skipped, Pending: snap.pending,
		DropRate: percent(snap.exact+snap.near, snap.stored+snap.exact+snap.near),
		K:        snap.k, KKnown: snap.kKnown, Features: snap.features, Layout: snap.layout,
		Config: s.opts.Config, BuildTime: snap.buildTime.Round(time.Millisecond),
	}
	d.Sources = s.dirNames()
	if len(snap.dirs) > 1 {
		d.Dirs = snap.dirs
	}
	if s.opts.Live != nil {
		st := s.opts.Live.Stats()
		d.Run = &st
		if st.Elapsed > 0 {
			d.RunRate = fmt.Sprintf("%.1f", float64(st.Fetched)/st.Elapsed.Seconds())
		}
	}
	d.Chart = rateChart(snap.timeline, snap.binWidth)
	if n := len(snap.timeline); n > 0 {
		d.TimelineFrom = snap.timeline[0].Start.UTC().Format(time.DateTime)
		d.TimelineTo = snap.timeline[n-1].Start.Add(snap.binWidth).UTC().Format(time.DateTime)
		d.BinLen = snap.binWidth.String()
	}
	hosts := append([]hostRow(nil), snap.hosts...)
	sort.SliceStable(hosts, func(i, j int) bool {
		a, b := hosts[i], hosts[j]
		return a.Stored+a.Dropped+a.Queued+a.Failed > b.Stored+b.Dropped+b.Queued+b.Failed
	})
	if len(hosts) > hostsOnOverview {
		d.MoreHosts = len(hosts) - hostsOnOverview
		hosts = hosts[:hostsOnOverview]
	}
	for _, h := range hosts {
		v := hostView{hostRow: h}
		if s.opts.Live != nil {
			v.Delay = s.opts.Live.HostDelay(h.Host).String()
		}
		d.Hosts = append(d.Hosts, v)
	}
	s.render(w, "overview", page{Title: "Overview", Nav: "overview", Built: snap.built, Body: d})
}

func percent(n, of int) string {
	if of == 0 {
		return "0.0%"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(of))
}

// dupFilter is the Duplicates page's form.
type dupFilter struct {
	Host, Reason, Q, Sort  string
	MinD, MaxD             int // MaxD < 0: no limit
	MinSim, MaxSim         float64
	HasMinSim, HasMaxSim   bool
	Page                   int
	MinDText, MaxDText     string // as typed, for the form
	MinSimText, MaxSimText string
}

func parseDupFilter(q url.Values) (dupFilter, error) {
	f := dupFilter{Host: q.Get("host"), Reason: q.Get("reason"), Q: strings.TrimSpace(q.Get("q")), Sort: q.Get("sort"), MaxD: -1,
		MinDText: q.Get("min"), MaxDText: q.Get("max"), MinSimText: q.Get("minsim"), MaxSimText: q.Get("maxsim")}
	if len(f.Q) > maxSearchQueryLen {
		return f, fmt.Errorf("search text longer than %d bytes", maxSearchQueryLen)
	}
	if f.Reason != "" && f.Reason != storage.ReasonExact && f.Reason != storage.ReasonNear {
		return f, fmt.Errorf("reason %q: want %q or %q", f.Reason, storage.ReasonExact, storage.ReasonNear)
	}
	if f.Sort != "" && f.Sort != "size" && f.Sort != "closeness" {
		return f, fmt.Errorf("sort %q: want size or closeness", f.Sort)
	}
	var err error
	if f.MinD, err = intParam(f.MinDText, 0, "min distance"); err != nil {
		return f, err
	}
	if f.MaxD, err = intParam(f.MaxDText, -1, "max distance"); err != nil {
		return f, err
	}
	if f.Page, err = intParam(q.Get("page"), 1, "page"); err != nil {
		return f, err
	}
	f.Page = max(f.Page, 1)
	if f.MinSimText != "" {
		if f.MinSim, err = strconv.ParseFloat(f.MinSimText, 64); err != nil {
			return f, fmt.Errorf("min similarity %q: not a number", f.MinSimText)
		}
		f.HasMinSim = true
	}
	if f.MaxSimText != "" {
		if f.MaxSim, err = strconv.ParseFloat(f.MaxSimText, 64); err != nil {
			return f, fmt.Errorf("max similarity %q: not a number", f.MaxSimText)
		}
		f.HasMaxSim = true
	}
	return f, nil
}

func intParam(v string, def int, name string) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%s %q: not a whole number", name, v)
	}
	return n, nil
}

func (f dupFilter) match(d *dropHead) bool {
	if f.Reason != "" && d.Reason != f.Reason {
		return false
	}
	if d.Distance < f.MinD || f.MaxD >= 0 && d.Distance > f.MaxD {
		return false
	}
	if f.Host != "" && d.Host != f.Host {
		return false
	}
	if (f.HasMinSim || f.HasMaxSim) && !d.HasSimilarity {
		return false
	}
	if f.HasMinSim && d.Similarity < f.MinSim || f.HasMaxSim && d.Similarity > f.MaxSim {
		return false
	}
	return true
}

type dupsData struct {
	F                  dupFilter
	Dirs               []string // the sources, when there are several (a crawl split across processes)
	Elsewhere          int      // drops of pages no source stores
	Hosts              []string
	HasSimilarity      bool
	Clusters, Drops    int // matching
	AllClusters, All   int
	Shown              []clusterView
	Page, Pages        int
	PrevURL, NextURL   string
	K                  int
	SortSize, SortNear bool
}

type clusterView struct {
	Src       int
	Page      uint64
	URL       string
	Title     string
	FP        string
	Data      string // the directory storing the page, when there are several
	Drops     []*dropHead
	Matching  int
	More      int
	Missing   bool // the stored page is not in the store
	Elsewhere bool // the drops name the page by URL, and no source stores it
	Closeness int
}

// head returns the stored page heading c (false for a page no source
// stores, or one missing from its store).
func (snap *snapshot) head(c *cluster) (pageHead, bool) {
	if c.Elsewhere != "" {
		return pageHead{URL: c.Elsewhere, lowerURL: lower(c.Elsewhere)}, false
	}
	h, ok := snap.pages[c.Src][c.Page]
	return h, ok
}

func (s *Server) dups(w http.ResponseWriter, r *http.Request) {
	snap, err := s.snapshot(r.Context())
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	f, err := parseDupFilter(r.URL.Query())
	if err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	q := lower(f.Q)
	d := dupsData{F: f, Hosts: snap.hostKeys, AllClusters: len(snap.clusters), All: len(snap.drops), K: snap.k, Elsewhere: snap.elsewhere}
	if len(s.opts.Sources) > 1 {
		d.Dirs = s.dirNames()
	}
	type hit struct {
		c         *cluster
		n         int
		closeness int // the largest matching distance: the nearest to k
	}
	var hits []hit
	for i := range snap.clusters {
		c := &snap.clusters[i]
		head, _ := snap.head(c)
		headMatches := q != "" && (strings.Contains(head.lowerURL, q) || strings.Contains(head.lowerTit, q))
		h := hit{c: c, closeness: -1}
		for _, di := range c.drops {
			dr := &snap.drops[di]
			if dr.HasSimilarity {
				d.HasSimilarity = true
			}
			if !f.match(dr) {
				continue
			}
			if q != "" && !headMatches && !strings.Contains(dr.lowerURL, q) && !strings.Contains(dr.lowerTit, q) {
				continue
			}
			h.n++
			h.closeness = max(h.closeness, dr.Distance)
		}
		if h.n > 0 {
			hits = append(hits, h)
			d.Drops += h.n
		}
	}
	d.Clusters = len(hits)
	if f.Sort == "closeness" {
		d.SortNear = true
		sort.SliceStable(hits, func(i, j int) bool {
			return hits[i].closeness > hits[j].closeness || hits[i].closeness == hits[j].closeness && hits[i].n > hits[j].n
		})
	} else {
		d.SortSize = true
		sort.SliceStable(hits, func(i, j int) bool { return hits[i].n > hits[j].n })
	}
	d.Pages = max(1, (len(hits)+clustersPerPage-1)/clustersPerPage)
	d.Page = min(f.Page, d.Pages)
	lo := (d.Page - 1) * clustersPerPage
	for _, h := range hits[lo:min(lo+clustersPerPage, len(hits))] {
		head, ok := snap.head(h.c)
		cv := clusterView{Src: h.c.Src, Page: h.c.Page, URL: head.URL, Title: head.Title, Missing: !ok && h.c.Elsewhere == "",
			Elsewhere: h.c.Elsewhere != "", FP: contentseen.Fingerprint(head.FP).String(), Matching: h.n, Closeness: h.closeness}
		if d.Dirs != nil && !cv.Elsewhere {
			cv.Data = d.Dirs[h.c.Src]
		}
		headMatches := q != "" && (strings.Contains(head.lowerURL, q) || strings.Contains(head.lowerTit, q))
		for _, di := range h.c.drops {
			dr := &snap.drops[di]
			if !f.match(dr) || q != "" && !headMatches && !strings.Contains(dr.lowerURL, q) && !strings.Contains(dr.lowerTit, q) {
				continue
			}
			if len(cv.Drops) < dropsPerCluster {
				cv.Drops = append(cv.Drops, dr)
			}
		}
		if f.Sort == "closeness" {
			sort.SliceStable(cv.Drops, func(i, j int) bool { return cv.Drops[i].Distance > cv.Drops[j].Distance })
		}
		cv.More = h.n - len(cv.Drops)
		d.Shown = append(d.Shown, cv)
	}
	if d.Page > 1 {
		d.PrevURL = pageURL(r.URL, d.Page-1)
	}
	if d.Page < d.Pages {
		d.NextURL = pageURL(r.URL, d.Page+1)
	}
	s.render(w, "dups", page{Title: "Duplicates", Nav: "dups", Built: snap.built, Body: d})
}

// pageURL is u with its page parameter set to n.
func pageURL(u *url.URL, n int) string {
	q := u.Query()
	q.Set("page", strconv.Itoa(n))
	return u.Path + "?" + q.Encode()
}

type pairData struct {
	Src            int
	Key            string // "src:drop": the label's key in the browser
	DropData       string // the directories of the dropped and the stored page, when there are several
	OrigData       string
	Drop           *storage.Drop
	Orig           *storage.Page
	DropFP, OrigFP string
	Distance       int
	ShownDistance  int // between the fingerprints shown, when it differs
	Similarity     string
	Verified       string // the verified similarity, "" when not recorded
	Containment    string
	Scheme         string
	K              int
	Exact          bool
	TitleDiffers   bool
	NoText         bool
	Left, Right    []segment
	Same, Del, Ins int
	OnlyDrop       []contentseen.Feature
	OnlyOrig       []contentseen.Feature
	FeaturesErr    string
	DropAt, OrigAt string
	IdenticalTexts bool
}

// segment is a run of the word diff on one side: Changed marks the words
// only that side has.
type segment struct {
	Text    string
	Changed bool
}

func (s *Server) pair(w http.ResponseWriter, r *http.Request) {
	snap, err := s.snapshot(r.Context())
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	src, err := intParam(r.URL.Query().Get("src"), 0, "src")
	if err != nil || src < 0 || src >= len(s.opts.Sources) {
		s.fail(w, http.StatusBadRequest, fmt.Errorf("src %q: want 0 to %d", r.URL.Query().Get("src"), len(s.opts.Sources)-1))
		return
	}
	id, err := strconv.ParseUint(r.URL.Query().Get("drop"), 10, 64)
	if err != nil {
		s.fail(w, http.StatusBadRequest, fmt.Errorf("drop %q: want a drop number (the Duplicates page links them)", r.URL.Query().Get("drop")))
		return
	}
	st := s.opts.Sources[src].Store
	dr, err := st.GetDrop(r.Context(), id)
	if err != nil {
		s.fail(w, http.StatusNotFound, fmt.Errorf("drop %d: %w", id, err))
		return
	}
	orig, origSrc, err := s.keptPage(r.Context(), src, dr)
	if err != nil {
		s.fail(w, http.StatusNotFound, fmt.Errorf("the page drop %d duplicates: %w", id, err))
		return
	}
	d := pairData{
		Src: src, Key: fmt.Sprintf("%d:%d", src, id), Drop: dr, Orig: orig,
		DropFP: contentseen.Fingerprint(dr.Fingerprint).String(), OrigFP: contentseen.Fingerprint(orig.Fingerprint).String(),
		Distance: dr.Distance, K: snap.k, Exact: dr.Reason == storage.ReasonExact,
		TitleDiffers: dr.Title != orig.Title, NoText: dr.Text == "",
		DropAt: dr.FetchedAt.UTC().Format(time.RFC3339), OrigAt: orig.FetchedAt.UTC().Format(time.RFC3339),
	}
	if len(s.opts.Sources) > 1 {
		d.DropData, d.OrigData = s.opts.Sources[src].Dir, s.opts.Sources[origSrc].Dir
	}
	dist := contentseen.Distance(contentseen.Fingerprint(dr.Fingerprint), contentseen.Fingerprint(orig.Fingerprint))
	if dist != dr.Distance {
		d.ShownDistance = dist
	}
	d.Similarity = fmt.Sprintf("%.3f", contentseen.Similarity(contentseen.Fingerprint(dr.Fingerprint), contentseen.Fingerprint(orig.Fingerprint)))
	if dr.Similarity > 0 || dr.Containment > 0 {
		d.Verified = fmt.Sprintf("%.3f", dr.Similarity)
		d.Containment = fmt.Sprintf("%.3f", dr.Containment)
	}
	if !d.NoText {
		runs := worddiff.Diff(orig.Text, dr.Text)
		d.Same, d.Del, d.Ins = worddiff.Words(runs)
		d.IdenticalTexts = orig.Text == dr.Text
		for _, run := range runs {
			text := run.Text()
			switch run.Kind {
			case worddiff.Same:
				d.Left = append(d.Left, segment{Text: text})
				d.Right = append(d.Right, segment{Text: text})
			case worddiff.Del:
				d.Left = append(d.Left, segment{Text: text, Changed: true})
			default:
				d.Right = append(d.Right, segment{Text: text, Changed: true})
			}
		}
		fper, scheme, err := s.fingerprinter()
		d.Scheme = scheme
		if err != nil {
			d.FeaturesErr = err.Error()
		} else {
			fd, fo := fper.Features(dr.Text), fper.Features(orig.Text)
			d.OnlyDrop, d.OnlyOrig = contentseen.OnlyIn(fd, fo, featuresPerSide), contentseen.OnlyIn(fo, fd, featuresPerSide)
		}
	}
	s.render(w, "pair", page{Title: "Pair: " + dr.URL, Nav: "dups", Built: snap.built, Body: d})
}

type distancesData struct {
	K                    int
	KKnown               bool
	Near, NN             chart
	NearCount, NNCount   int
	NNPages              int
	Sampled              bool
	NearRows             []histRow
	Exact                int
	NeighbourSampleLimit int
}

type histRow struct {
	D, Near, NN int
	IsK         bool
}

func (s *Server) distances(w http.ResponseWriter, r *http.Request) {
	snap, err := s.snapshot(r.Context())
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	hi := snap.k
	for i := range 65 {
		if snap.nearHist[i] > 0 || snap.nnHist[i] > 0 {
			hi = max(hi, i)
		}
	}
	hi = min(64, hi+1)
	d := distancesData{K: snap.k, KKnown: snap.kKnown, NNPages: snap.nnPages, Sampled: snap.sampled, Exact: snap.exact,
		Near: histChart(snap.nearHist[:], hi, snap.k, "near drops"), NN: histChart(snap.nnHist[:], hi, snap.k, "stored pages"),
		NeighbourSampleLimit: crawler.BruteForcePages}
	for i := 0; i <= hi; i++ {
		d.NearCount += snap.nearHist[i]
		d.NNCount += snap.nnHist[i]
		if snap.nearHist[i] > 0 || snap.nnHist[i] > 0 || i == snap.k {
			d.NearRows = append(d.NearRows, histRow{D: i, Near: snap.nearHist[i], NN: snap.nnHist[i], IsK: i == snap.k})
		}
	}
	s.render(w, "distances", page{Title: "Distances", Nav: "distances", Built: snap.built, Body: d})
}

type failuresData struct {
	Kind             string
	Q                string
	Failed, Skipped  int
	Matching         int
	Failures         []failRow
	Skips            []skipRow
	Page, Pages      int
	PrevURL, NextURL string
	Multi            bool
}

func (s *Server) failures(w http.ResponseWriter, r *http.Request) {
	snap, err := s.snapshot(r.Context())
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	q := r.URL.Query()
	d := failuresData{Kind: q.Get("kind"), Q: strings.TrimSpace(q.Get("q")), Failed: snap.failed, Skipped: snap.skipped, Multi: len(s.opts.Sources) > 1}
	if d.Kind == "" {
		d.Kind = "failed"
	}
	if d.Kind != "failed" && d.Kind != "skipped" {
		s.fail(w, http.StatusBadRequest, fmt.Errorf("kind %q: want failed or skipped", d.Kind))
		return
	}
	pg, err := intParam(q.Get("page"), 1, "page")
	if err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	lq := lower(d.Q)
	keep := func(url, reason string) bool {
		return lq == "" || strings.Contains(lower(url), lq) || strings.Contains(lower(reason), lq)
	}
	var n int
	if d.Kind == "failed" {
		rows := filterRows(snap.failures, func(f failRow) bool { return keep(f.URL, f.Reason) })
		n = len(rows)
		d.Page, d.Pages, d.Failures = pageOf(rows, pg, failuresPerPage)
	} else {
		rows := filterRows(snap.skips, func(f skipRow) bool { return keep(f.URL, f.Reason) })
		n = len(rows)
		d.Page, d.Pages, d.Skips = pageOf(rows, pg, failuresPerPage)
	}
	d.Matching = n
	if d.Page > 1 {
		d.PrevURL = pageURL(r.URL, d.Page-1)
	}
	if d.Page < d.Pages {
		d.NextURL = pageURL(r.URL, d.Page+1)
	}
	s.render(w, "failures", page{Title: "Failures and skips", Nav: "failures", Built: snap.built, Body: d})
}

func (s *Server) labels(w http.ResponseWriter, r *http.Request) {
	s.render(w, "labels", page{Title: "Labels", Nav: "labels"})
}

// filterRows returns the rows keep accepts, in order.
func filterRows[T any](rows []T, keep func(T) bool) []T {
	var out []T
	for _, r := range rows {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// pageOf returns page pg (clamped to 1..pages) of rows at per rows a page:
// the page, the number of pages (at least 1) and its rows.
func pageOf[T any](rows []T, pg, per int) (page, pages int, out []T) {
	pages = max(1, (len(rows)+per-1)/per)
	page = min(max(pg, 1), pages)
	lo := (page - 1) * per
	return page, pages, rows[lo:min(lo+per, len(rows))]
}
