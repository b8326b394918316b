package copyweb

import (
	"fmt"
	"io"
	"math/bits"
	"slices"
	"text/tabwriter"
)

// A Row counts the decisions on the pages of one kind.
type Row struct {
	Kind  Kind
	Pages int
	// TP: a copy dropped as a duplicate of a page of its cluster, or the
	// one page of its cluster stored (its original dropped as its copy).
	// FN: a copy stored beside another stored page of its cluster.
	// FP: a page dropped as a duplicate of a page outside its cluster, or
	// a page of a kept kind dropped at all (an original dropped as a copy
	// of its own copy excepted: its cluster is still stored once).
	// Kept: pages of a kept kind stored. Missing: neither stored nor
	// dropped (not reached, failed, skipped): a fault of the harness.
	TP, FP, FN, Kept, Missing int
}

// Precision is TP/(TP+FP), 1 when there is neither.
func (r Row) Precision() float64 { return ratio(r.TP, r.TP+r.FP) }

// Recall is TP/(TP+FN), 1 when there is neither.
func (r Row) Recall() float64 { return ratio(r.TP, r.TP+r.FN) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

// A Miss is one wrong decision, for the detailed listing.
type Miss struct {
	Page        *Page
	What        string // "FN" or "FP"
	Other       string // FN: the stored page of the cluster kept first; FP: the page it was dropped for
	OtherSource string // the corpus page behind Other
	// Distance between the two pages' fingerprints (FN), or the drop's
	// distance (FP); -1 when unknown (a thin page has no fingerprint).
	Distance int
	Reason   string
}

// A Report is the score of one crawl of a web.
type Report struct {
	Rows   []Row // CopyKinds then KeepKinds, kinds with no page left out
	Total  Row   // every kind
	Misses []Miss
}

// Score compares the crawl's outcomes with the web's ground truth.
func Score(w *Web, out map[string]*Outcome) *Report {
	// The page a cluster keeps: its stored original, else its first stored copy.
	keeper := map[int]*Page{}
	for _, p := range w.Pages {
		o := out[p.ID]
		if o == nil || !o.Stored {
			continue
		}
		k := keeper[p.Cluster]
		switch {
		case k == nil, k.Kind.Positive() && !p.Kind.Positive():
			keeper[p.Cluster] = p
		case k.Kind.Positive() && p.Kind.Positive() && o.StoreID < out[k.ID].StoreID:
			keeper[p.Cluster] = p
		}
	}
	rows := map[Kind]*Row{}
	rep := &Report{}
	for _, p := range w.Pages {
		r := rows[p.Kind]
		if r == nil {
			r = &Row{Kind: p.Kind}
			rows[p.Kind] = r
		}
		r.Pages++
		o := out[p.ID]
		switch {
		case o == nil:
			r.Missing++
		case o.Dropped:
			of := w.Page(o.DuplicateOf)
			switch {
			case of != nil && of.Cluster == p.Cluster && p.Kind.Positive():
				r.TP++
			case of != nil && of.Cluster == p.Cluster:
				// an original dropped as a copy of its copy, which is kept
			default:
				r.FP++
				rep.Misses = append(rep.Misses, Miss{Page: p, What: "FP", Other: o.DuplicateOf, OtherSource: sourceOf(w, o.DuplicateOf), Distance: o.Distance, Reason: o.Reason})
			}
		case !p.Kind.Positive():
			r.Kept++
		case keeper[p.Cluster] == p:
			r.TP++ // the cluster's one stored page: its original went as its copy
		default:
			r.FN++
			k := keeper[p.Cluster]
			rep.Misses = append(rep.Misses, Miss{Page: p, What: "FN", Other: k.ID, OtherSource: k.Source, Distance: distance(o, out[k.ID])})
		}
	}
	for _, k := range slices.Concat(CopyKinds, KeepKinds) {
		if r := rows[k]; r != nil {
			rep.Rows = append(rep.Rows, *r)
			rep.Total.Pages += r.Pages
			rep.Total.TP += r.TP
			rep.Total.FP += r.FP
			rep.Total.FN += r.FN
			rep.Total.Kept += r.Kept
			rep.Total.Missing += r.Missing
		}
	}
	rep.Total.Kind = "all"
	return rep
}

func sourceOf(w *Web, id string) string {
	if p := w.Page(id); p != nil {
		return p.Source
	}
	return ""
}

func distance(a, b *Outcome) int {
	if a.Fingerprint == 0 || b.Fingerprint == 0 {
		return -1
	}
	return bits.OnesCount64(a.Fingerprint ^ b.Fingerprint)
}

// WriteTable writes the report as a table, one row per kind and a total.
func (rep *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kind\tpages\tTP\tFP\tFN\tkept\tmissing\tprecision\trecall\t")
	for _, r := range append(slices.Clone(rep.Rows), rep.Total) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.3f\t%.3f\t\n", r.Kind, r.Pages, r.TP, r.FP, r.FN, r.Kept, r.Missing, r.Precision(), r.Recall())
	}
	return tw.Flush()
}

// WriteMisses lists every wrong decision: the page, its kind and corpus
// source, the page it was kept beside (FN) or dropped for (FP), and the
// distance.
func (rep *Report) WriteMisses(w io.Writer) error {
	for _, m := range rep.Misses {
		dist := fmt.Sprint(m.Distance)
		if m.Distance < 0 {
			dist = "thin" // no fingerprint: too little text extracted
		}
		if _, err := fmt.Fprintf(w, "%s %-14s %-6s of %-6s other %-6s dist %4s %-5s %s", m.What, m.Page.Kind, m.Page.ID, m.Page.Of, m.Other, dist, m.Reason, m.Page.Source); err != nil {
			return err
		}
		if m.OtherSource != "" && m.OtherSource != m.Page.Source {
			if _, err := fmt.Fprintf(w, " (other: %s)", m.OtherSource); err != nil {
				return err
			}
		}
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
	}
	return nil
}
