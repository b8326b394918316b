package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/storage"
)

// runDedup is `crawl dedup`: the crawl's extraction and ContentSeen stage
// over pages already on disk, into a data directory (a new one, or a
// crawl's, to deduplicate a corpus against what was crawled).
func (m *Main) runDedup(ctx context.Context, args []string) (err error) {
	fset := m.newFlagSet("dedup")
	var paths stringList
	fset.Var(&paths, "input", "a directory of HTML files, a JSON Lines file (url with html or text) or a WARC / WARC.gz file;\n"+
		"repeatable, and arguments after the flags are inputs too")
	format := fset.String("format", formatAuto, "input format: auto (by name, then content), html, jsonl or warc")
	out := fset.String("out", "", "also write the records kept by this run to FILE as JSON Lines (the fields of crawl export)")
	batch := fset.Int("batch", 0, "records decided together: 1 = one transaction per record; N > 1 = batches of N\n"+
		"(near-duplicates found by a batch join, committed in a few transactions; same outcomes);\n"+
		"0 = automatic: batches of 4096 when the inputs total 1 MiB or more")
	var cf configFlags
	m.addConfigFlags(fset, &cf)
	rest, err := parseInterspersed(fset, args)
	if err != nil {
		return err
	}
	paths = append(paths, rest...)
	if len(paths) == 0 {
		return usageErrorf(fset, "dedup: --input PATH is required")
	}
	switch *format {
	case formatAuto, formatHTML, formatJSONL, formatWARC:
	default:
		return usageErrorf(fset, "dedup: unknown --format %q (supported: auto, html, jsonl, warc)", *format)
	}
	if *batch < 0 {
		return usageErrorf(fset, "dedup: --batch %d: want 0 (automatic), 1 (per record) or more", *batch)
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("dedup: input: %w", err)
		}
	}
	dopts := crawler.DedupOptions{Batch: *batch}
	if dopts.Batch == 0 {
		if dopts.Batch = 1; inputBytes(paths) >= autoBatchBytes {
			dopts.Batch = crawler.DefaultDedupBatch
		}
	}
	cfg, err := cf.load()
	if err != nil {
		return err
	}
	if cfg.Backend != "" {
		// Not quoted back whole: the URL may hold a password.
		return usageErrorf(fset, "dedup: a backend is set (the config's backend key, %s): crawl dedup judges pages against its data directory's own index, not a shared crawl's; "+
			"run it without one (--set backend=\"\") into a data directory of its own", backendAddr(cfg.Backend))
	}
	opts, err := crawlerOptions(cfg, nil, m.Stderr)
	if err != nil {
		return err
	}
	if name, backend, ok, err := crawler.DirCrawl(opts.DataDir); err != nil {
		return fmt.Errorf("dedup: %w", err)
	} else if ok {
		return fmt.Errorf("dedup: data directory %s is a worker of crawl %q on %s: its pages are judged by the shared index, which crawl dedup does not use, so it would store copies of pages other workers hold; dedup into a data directory of its own",
			opts.DataDir, name, backend)
	}
	c, err := crawler.Open(opts)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := c.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("dedup: close: %w", cerr))
		}
	}()

	var onKept func(*storage.Page) error
	var kept *keptWriter
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return fmt.Errorf("dedup: %w", err)
		}
		defer func() {
			ferr := kept.bw.Flush()
			if cerr := f.Close(); ferr == nil {
				ferr = cerr
			}
			if ferr != nil && err == nil {
				err = fmt.Errorf("dedup: write %s: %w", *out, ferr)
			}
		}()
		kept = newKeptWriter(f)
		onKept = kept.write
	}
	src := &inputs{paths: paths, format: *format, maxBody: int64(cfg.Fetch.MaxBodySize), log: opts.Logger}
	sum, runErr := c.DedupWith(ctx, src, onKept, dopts)
	if cerr := src.Close(); cerr != nil {
		runErr = errors.Join(runErr, fmt.Errorf("dedup: close input: %w", cerr))
	}
	if sum != nil {
		printDedupSummary(m.Stdout, sum)
		if src.malformed > 0 {
			fmt.Fprintf(m.Stdout, "Skipped %d malformed input line%s or record%[2]s (each named in a warning above).\n", src.malformed, plural(src.malformed))
		}
		if kept != nil {
			fmt.Fprintf(m.Stdout, "Kept records of this run: %s (%d)\n", *out, kept.n)
		}
	}
	return runErr
}

func printDedupSummary(w io.Writer, s *crawler.Summary) {
	r := s.Run
	rate := 0.0
	if r.Elapsed > 0 {
		rate = float64(r.Fetched) / r.Elapsed.Seconds()
	}
	held := ""
	if r.Held > 0 {
		held = fmt.Sprintf(", undecided %d (the page limit, an interrupt or an error stopped the run; a rerun decides them)", r.Held)
	}
	fmt.Fprintf(w, "This run: read %d record%s, kept %d (%d thin), dropped %d exact + %d near, skipped %d (already decided, not HTML, noindex or URL taken), errors %d%s in %s (%.0f records/s)\n",
		r.Fetched, plural(r.Fetched), r.Stored, r.Thin, r.DroppedExact, r.DroppedNear, r.Skipped, r.Errors, held,
		r.Elapsed.Truncate(time.Millisecond), rate)
	total := s.Pages + s.Drops
	drop := 0.0
	if total > 0 {
		drop = 100 * float64(s.Drops) / float64(total)
	}
	fmt.Fprintf(w, "Data directory: %d page%s stored, %d dropped as duplicates (drop rate %.1f%%)\n", s.Pages, plural(s.Pages), s.Drops, drop)
	fmt.Fprintf(w, "Store: %s/%s\nDrop log: %s\n", s.DataDir, crawler.DBFile, s.DropLog)
}

// autoBatchBytes is the input size from which `crawl dedup` decides in
// batches by default: one by one, each record costs an fsync'd
// transaction (1 to 2 ms: 535-1,000 text records/s here), which at 1 MiB
// of text-only JSON Lines (about a thousand records) is already one or two
// seconds; in batches of DefaultDedupBatch the same input takes about a
// twentieth of that (BenchmarkDedupText).
// Below it, records are committed one by one, each durable as soon as it
// is judged. A variable only so that a test can lower it.
var autoBatchBytes int64 = 1 << 20

// inputBytes sums the sizes of the files under paths (compressed sizes
// for .gz files). A file it cannot read counts as nothing: the input
// reader reports it.
func inputBytes(paths []string) int64 {
	var n int64
	add := func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, ierr := d.Info(); ierr == nil {
				n += info.Size()
			}
		}
		return nil // never stops the walk: unreadable parts are the reader's to report
	}
	for _, p := range paths {
		if err := filepath.WalkDir(p, add); err != nil {
			break // not reached: add never fails
		}
	}
	return n
}
