package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/internal/worddiff"
	"github.com/simcrawl/simcrawl/storage"
)

// dupGroupJSON is one line of `crawl dups --json`: a stored page and the
// pages dropped as its duplicates. The field names are a user contract.
type dupGroupJSON struct {
	ID          uint64        `json:"id"`  // stored page ID
	URL         string        `json:"url"` // stored page URL
	Title       string        `json:"title"`
	Fingerprint string        `json:"fingerprint"` // 16 hex digits
	Drops       []dupDropJSON `json:"drops"`       // in drop order
	// Data is the data directory that stores the page, when several are
	// read; ID is its ID there. A group of drops whose page none of them
	// stores has ID 0, no data, and the URL the drops name.
	Data string `json:"data,omitempty"`

	elsewhere bool // the page is stored in none of the directories read
}

type dupDropJSON struct {
	URL         string    `json:"url"`
	FinalURL    string    `json:"final_url,omitempty"`
	Distance    int       `json:"distance"` // Hamming distance in bits
	Reason      string    `json:"reason"`   // "exact" or "near"
	Fingerprint string    `json:"fingerprint"`
	Title       string    `json:"title"`
	FetchedAt   time.Time `json:"fetched_at"`
	Depth       int       `json:"depth"`
	// The verified resemblance of the texts (0..1); absent for drops
	// recorded before it was.
	Similarity  *float64 `json:"similarity,omitempty"`
	Containment *float64 `json:"containment,omitempty"`
	// Data is the data directory that recorded the drop, when several are
	// read.
	Data string `json:"data,omitempty"`
}

// dupFilter selects drops by the flags of `crawl dups`.
type dupFilter struct {
	host         string
	reason       string
	minD, maxD   int // maxD < 0: no limit
	filterActive bool
}

func (f dupFilter) match(d *storage.Drop) bool {
	if f.reason != "" && d.Reason != f.reason {
		return false
	}
	if d.Distance < f.minD || f.maxD >= 0 && d.Distance > f.maxD {
		return false
	}
	return f.host == "" || hostMatches(d.URL, f.host)
}

// hostMatches reports whether the URL's host is h, with or without the
// port: --host example.org matches http://example.org:8080/x too.
func hostMatches(rawURL, h string) bool {
	h = strings.ToLower(h)
	if strings.EqualFold(frontier.HostKey(rawURL), h) {
		return true
	}
	u, err := url.Parse(rawURL)
	return err == nil && strings.EqualFold(u.Hostname(), h)
}

func (m *Main) runDups(ctx context.Context, args []string) (err error) {
	if len(args) > 0 && args[0] == "show" {
		return m.runDupsShow(ctx, args[1:])
	}
	fset := m.newFlagSet("dups")
	usage := fset.Usage
	fset.Usage = func() {
		usage()
		fmt.Fprint(fset.Output(), dupsHelp)
	}
	var f dupFilter
	fset.StringVar(&f.host, "host", "", "only pages dropped from this host (host or host:port of the dropped URL)")
	fset.StringVar(&f.reason, "reason", "", `only drops with this reason: "exact" (same extracted text) or "near" (fingerprints within k bits)`)
	fset.IntVar(&f.minD, "min-distance", 0, "only drops at least this many bits from the page they duplicate")
	fset.IntVar(&f.maxD, "max-distance", -1, "only drops at most this many bits from the page they duplicate (-1: no limit)")
	asJSON := fset.Bool("json", false, `one JSON object per group: {"id","url","title","fingerprint","drops":[{"url","final_url","distance","reason","fingerprint","title","fetched_at","depth","similarity","containment"}]}`+
		"\n(with several --data, \"data\": the directory, in groups and drops)")
	var cf configFlags
	m.addReadFlags(fset, &cf)
	if err := fset.Parse(args); err != nil {
		return err
	}
	if fset.Arg(0) == "show" {
		return usageErrorf(fset, "dups: write show first, then its flags: crawl dups show [--data DIR]... URL")
	}
	if fset.NArg() > 0 {
		if suggest(fset.Arg(0), subcommands["dups"]) != "" {
			return usageErrorf(fset, "dups: unexpected argument %q; did you mean \"dups show\"?", fset.Arg(0))
		}
		return usageErrorf(fset, "dups: unexpected argument %q (to explain one drop: crawl dups show URL)", fset.Arg(0))
	}
	if f.reason != "" && f.reason != storage.ReasonExact && f.reason != storage.ReasonNear {
		return usageErrorf(fset, "dups: --reason %q: want %q or %q", f.reason, storage.ReasonExact, storage.ReasonNear)
	}
	if f.minD < 0 {
		return usageErrorf(fset, "dups: --min-distance %d: want >= 0", f.minD)
	}
	if f.maxD >= 0 && f.maxD < f.minD {
		return usageErrorf(fset, "dups: --max-distance %d is below --min-distance %d: nothing could match", f.maxD, f.minD)
	}
	f.filterActive = f.host != "" || f.reason != "" || f.minD > 0 || f.maxD >= 0
	set, _, err := m.openDataSet(fset, cf, "dups")
	if err != nil {
		return err
	}
	defer func() {
		if cerr := set.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("dups: close: %w", cerr)
		}
	}()
	defer set.Recover(&err)
	bw := bufio.NewWriterSize(m.Stdout, 1<<16)
	groups, drops, unresolved, err := listDups(ctx, set, f, bw, *asJSON)
	if ferr := bw.Flush(); err == nil && ferr != nil {
		err = ferr
	}
	if err != nil {
		return fmt.Errorf("dups: %w", err)
	}
	if unresolved > 0 {
		fmt.Fprintf(m.Stderr, "%d drop%s of pages stored in none of the data directories read (%s): add the other workers' directories with --data\n",
			unresolved, plural(unresolved), dirNames(set))
	}
	if !*asJSON {
		switch {
		case groups == 0 && f.filterActive:
			fmt.Fprintln(m.Stdout, "No dropped page matches the filters.")
		case groups == 0:
			fmt.Fprintln(m.Stdout, "No dropped pages.")
		default:
			fmt.Fprintf(m.Stdout, "%d dropped page%s in %d group%s. Explain one: crawl dups show%s URL\n",
				drops, plural(drops), groups, plural(groups), cf.dataArgs())
		}
		if len(set.Dirs) > 1 {
			fmt.Fprintf(m.Stdout, "Read as one crawl: %s.\n", dirNames(set))
		}
	}
	return nil
}

// dataArgs is the part of the command line that chose the data directory,
// " --config FILE --data DIR" or less, for a hint the user can paste.
func (cf configFlags) dataArgs() string {
	var b strings.Builder
	if cf.config != "" {
		b.WriteString(" --config " + shellQuote(cf.config))
	}
	for _, s := range cf.sets {
		if strings.HasPrefix(strings.TrimSpace(s), "data=") {
			b.WriteString(" --set " + shellQuote(s))
		}
	}
	if cf.data != "" {
		b.WriteString(" --data " + shellQuote(string(cf.data)))
	}
	for _, d := range cf.dirs {
		b.WriteString(" --data " + shellQuote(d))
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and -_./:=@+,
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@+,", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

const dupsHelp = `
Each group is a stored page and the pages dropped as its duplicates, largest groups first (ties in
page order); each drop shows its reason (exact or near) and distance in bits. Filters combine (all
must hold).

crawl dups show [--data DIR]... URL
    explains one drop: the dropped page's extracted text beside the stored page's with the
    differences marked word by word (colour on a terminal, else [-only in the stored page-]
    {+only in the dropped page+}), the distance, both fingerprints, and the heaviest features one
    text has and the other lacks.
`

func writeGroup(w io.Writer, g dupGroupJSON) error {
	url := g.URL
	if url == "" {
		url = "(missing from the store)"
	}
	noun := "drops"
	if len(g.Drops) == 1 {
		noun = "drop"
	}
	where := fmt.Sprintf("page %d", g.ID)
	switch {
	case g.elsewhere:
		where = "stored in none of the data directories read"
	case g.Data != "":
		where += " in " + g.Data
	}
	if _, err := fmt.Fprintf(w, "%s  (%s, %d %s)  %q\n", url, where, len(g.Drops), noun, g.Title); err != nil {
		return err
	}
	for _, d := range g.Drops {
		res := "                   " // a drop recorded before resemblance was
		if d.Similarity != nil {
			res = fmt.Sprintf("sim %.2f cont %.2f", *d.Similarity, *d.Containment)
		}
		if _, err := fmt.Fprintf(w, "  %-5s %2d bit%s  %s  %s  %q\n", d.Reason, d.Distance, plural(d.Distance), res, d.URL, d.Title); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w)
	return err
}

// runDupsShow explains one drop: both texts with a word diff, the
// distance, both fingerprints, and the heaviest features that differ.
func (m *Main) runDupsShow(ctx context.Context, args []string) (err error) {
	fset := m.newFlagSet("dups")
	fset.Init("dups show", flag.ContinueOnError) // for `crawl help dups show` in a usage error
	fset.Usage = func() {
		fmt.Fprintf(fset.Output(), "Usage: crawl dups show [--data DIR]... URL\n\n"+
			"Explain why the page at URL was dropped: its extracted text beside the stored page's, with\n"+
			"differences marked word by word (colour on a terminal, else [-only in the stored page-]\n"+
			"{+only in the dropped page+}), the distance, both fingerprints, and the heaviest features\n"+
			"one text has and the other lacks (weighed with the feature options the crawl's index was built with).\n\nFlags:\n")
		fset.PrintDefaults()
	}
	var cf configFlags
	m.addReadFlags(fset, &cf)
	if err := fset.Parse(args); err != nil {
		return err
	}
	if fset.NArg() == 0 {
		return usageErrorf(fset, "dups show: want exactly one URL")
	}
	target := fset.Arg(0)
	if err := fset.Parse(fset.Args()[1:]); err != nil { // flags may also follow the URL
		return err
	}
	if fset.NArg() > 0 {
		return usageErrorf(fset, "dups show: want exactly one URL, got also %q", fset.Arg(0))
	}
	set, _, err := m.openDataSet(fset, cf, "dups show")
	if err != nil {
		return err
	}
	defer func() {
		if cerr := set.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("dups show: close: %w", cerr)
		}
	}()
	defer set.Recover(&err)
	dir, d, err := findDrop(ctx, set, target)
	if err != nil {
		return err
	}
	ref, ok, err := set.KeptPage(dir, d)
	if err != nil {
		return fmt.Errorf("dups show: %w", err)
	}
	if !ok {
		return crawler.NotDamage(fmt.Errorf("dups show: %s duplicates %s, which none of the data directories read stores (%s): add the other workers' directories with --data", d.URL, d.DuplicateOfURL, dirNames(set)))
	}
	orig, err := set.In(ref.Dir).Store.Get(ctx, ref.ID)
	if err != nil {
		return fmt.Errorf("dups show: the page %s duplicates (page %d): %w", d.URL, ref.ID, err)
	}
	fper, scheme, err := fingerprinterOf(set, dir, ref.Dir)
	if err != nil {
		return fmt.Errorf("dups show: %w", err)
	}
	bw := bufio.NewWriter(m.Stdout)
	// NO_COLOR (no-color.org) turns colour off on a terminal too.
	if len(set.Dirs) > 1 {
		fmt.Fprintf(bw, "Data:         dropped in %s, the stored page in %s\n", set.Dirs[dir].Dir, set.Dirs[ref.Dir].Dir)
	}
	showDrop(bw, d, orig, fper, scheme, isTerminal(m.Stdout) && os.Getenv("NO_COLOR") == "")
	return bw.Flush()
}

// findDrop finds the drop of target (as given, then in canonical form) in
// the first directory of set that records one, or says what target is
// instead (an error marked crawler.NotDamage: the answer, not damage).
func findDrop(ctx context.Context, set *crawler.DataSet, target string) (dir int, d *storage.Drop, err error) {
	urls := []string{target}
	if c, err := frontier.Canonical(target); err == nil && c != target {
		urls = append(urls, c)
	}
	for i := range set.Dirs {
		st := set.In(i).Store
		for _, u := range urls {
			d, err := st.DropByURL(ctx, u)
			if err == nil {
				return i, d, nil
			}
			if !errors.Is(err, storage.ErrNotFound) {
				return 0, nil, fmt.Errorf("dups show: %w", err)
			}
		}
	}
	for i := range set.Dirs {
		st := set.In(i).Store
		for _, u := range urls {
			p, err := st.ByURL(ctx, u)
			if err == nil {
				where := ""
				if len(set.Dirs) > 1 {
					where = " in " + set.Dirs[i].Dir
				}
				return 0, nil, crawler.NotDamage(fmt.Errorf("dups show: %s is a stored page (page %d%s), not a dropped one; `crawl dups` lists the pages dropped as its duplicates", target, p.ID, where))
			}
			if !errors.Is(err, storage.ErrNotFound) {
				return 0, nil, fmt.Errorf("dups show: %w", err)
			}
		}
	}
	where := "this data directory"
	if len(set.Dirs) > 1 {
		where = "these data directories"
	}
	return 0, nil, crawler.NotDamage(fmt.Errorf("dups show: %s was not dropped as a duplicate (nor stored) in %s; `crawl dups` lists the dropped pages", target, where))
}

// fingerprinterOf returns the Fingerprinter of the index of the first
// directory that has one, trying first the drop's (dir) and the stored
// page's (kept): the workers of one crawl share one feature scheme, and a
// worker whose index is shared elsewhere may have none of its own.
func fingerprinterOf(set *crawler.DataSet, dir, kept int) (*contentseen.Fingerprinter, string, error) {
	order := []int{dir}
	if kept != dir {
		order = append(order, kept)
	}
	var first error
	for _, i := range append(order, others(set, dir, kept)...) {
		f, scheme, err := set.In(i).Fingerprinter()
		if err == nil {
			return f, scheme, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, "", first
}

// others returns the indexes of set's directories but a and b.
func others(set *crawler.DataSet, a, b int) []int {
	var out []int
	for i := range set.Dirs {
		if i != a && i != b {
			out = append(out, i)
		}
	}
	return out
}

func showDrop(w io.Writer, d *storage.Drop, orig *storage.Page, fper *contentseen.Fingerprinter, scheme string, color bool) {
	fpD, fpO := contentseen.Fingerprint(d.Fingerprint), contentseen.Fingerprint(orig.Fingerprint)
	fmt.Fprintf(w, "Dropped:      %s\n              %q\n              fingerprint %s, fetched %s, depth %d\n",
		d.URL, d.Title, fpD, d.FetchedAt.UTC().Format(time.RFC3339), d.Depth)
	fmt.Fprintf(w, "Duplicate of: %s (page %d)\n              %q\n              fingerprint %s, fetched %s\n",
		orig.URL, orig.ID, orig.Title, fpO, orig.FetchedAt.UTC().Format(time.RFC3339))
	why := "near: fingerprints within k bits, verified by the texts' sketches"
	if d.Reason == storage.ReasonExact {
		why = "exact: the same text but for punctuation, spacing, case and the headline"
	}
	if dist := contentseen.Distance(fpD, fpO); dist != d.Distance {
		// The stored page was matched under another fingerprint.
		why += fmt.Sprintf("; the fingerprints shown are %s apart", bitsText(dist))
	}
	fmt.Fprintf(w, "Distance:     %s (%s; features %s)\n", bitsText(d.Distance), why, scheme)
	writeResemblance(w, d, orig)
	if d.Title != orig.Title {
		fmt.Fprint(w, "Title:        ")
		worddiff.Write(w, worddiff.Diff(orig.Title, d.Title), color)
	}
	if d.Text == "" {
		fmt.Fprintln(w, "\nThe dropped page's text was not kept (store.keep_drop_text was off when it was dropped): no text diff.")
		return
	}
	runs := worddiff.Diff(orig.Text, d.Text)
	same, del, ins := worddiff.Words(runs)
	switch {
	case del == 0 && ins == 0 && orig.Text == d.Text:
		fmt.Fprintf(w, "\nText: identical in both (%d word%s):\n", same, plural(same))
	case color:
		fmt.Fprintf(w, "\nText: %d word%s in both, %s%d only in the stored page%s, %s%d only in the dropped page%s:\n",
			same, plural(same), worddiff.ANSIRed, del, worddiff.ANSIReset, worddiff.ANSIGreen, ins, worddiff.ANSIReset)
	default:
		fmt.Fprintf(w, "\nText: %d word%s in both, [-%d only in the stored page-], {+%d only in the dropped page+}:\n", same, plural(same), del, ins)
	}
	worddiff.Write(w, runs, color)

	fd, fo := fper.Features(d.Text), fper.Features(orig.Text)
	onlyD, onlyO := contentseen.OnlyIn(fd, fo, 10), contentseen.OnlyIn(fo, fd, 10)
	fmt.Fprintln(w)
	writeFeatures(w, "Heaviest features only in the dropped page:", onlyD)
	writeFeatures(w, "Heaviest features only in the stored page: ", onlyO)
}

func writeFeatures(w io.Writer, label string, fs []contentseen.Feature) {
	if len(fs) == 0 {
		fmt.Fprintf(w, "%s none\n", label)
		return
	}
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = fmt.Sprintf("%q %.2f", f.Text, f.Weight)
	}
	fmt.Fprintf(w, "%s %s\n", label, strings.Join(parts, ", "))
}

// plural is "s" unless n is 1, for "%d page%s".
func plural[N ~int | ~int64](n N) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func bitsText(n int) string { return fmt.Sprintf("%d bit%s", n, plural(n)) }

// writeResemblance prints the similarity and containment the judge
// verified, or, for a drop recorded before they were, the values computed
// now from the two texts (when the dropped page's text was kept).
func writeResemblance(w io.Writer, d *storage.Drop, orig *storage.Page) {
	sim, cont, how := d.Similarity, d.Containment, "as judged"
	if sim == 0 && cont == 0 {
		if d.Text == "" {
			return
		}
		r := contentseen.Compare(contentseen.SketchOf(contentseen.StripTitle(d.Text, d.Title)),
			contentseen.SketchOf(contentseen.StripTitle(orig.Text, orig.Title)))
		sim, cont, how = r.Similarity, r.Containment, "computed now: the drop predates them"
	}
	fmt.Fprintf(w, "Similarity:   %.3f (Jaccard of word 3-shingles), containment %.3f (%s)\n", sim, cont, how)
}

// round3 rounds a resemblance to the 3 decimals the drop log writes.
func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
