package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/simcrawl/simcrawl/crawler"
)

func (m *Main) runExport(ctx context.Context, args []string) (err error) {
	fset := m.newFlagSet("export")
	format := fset.String("format", "jsonl", "output format: jsonl, or warc (WARC/1.1 response records with raw bodies and a\nmetadata record carrying the fingerprint, gzip per record: a .warc.gz)")
	out := fset.String("out", "", "output file (default: standard output)")
	var cf configFlags
	m.addReadFlags(fset, &cf)
	if err := fset.Parse(args); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		return usageErrorf(fset, "export: unexpected argument %q (the directories to export are given with --data DIR)", fset.Arg(0))
	}
	if *format != "jsonl" && *format != "warc" {
		return usageErrorf(fset, "export: unknown --format %q (supported: jsonl, warc)", *format)
	}
	set, _, err := m.openDataSet(fset, cf, "export")
	if err != nil {
		return err
	}
	defer func() {
		if cerr := set.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("export: close: %w", cerr)
		}
	}()
	defer set.Recover(&err)

	var w io.Writer = m.Stdout
	var f *os.File
	if *out != "" {
		f, err = os.Create(*out)
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	counts := make([]int, len(set.Dirs))
	if *format == "warc" {
		err = exportWARC(ctx, set, bw, counts)
	} else {
		err = set.Each(func(i int, d *crawler.Data) error {
			var err error
			counts[i], err = d.Store.ExportJSONLFrom(ctx, bw, sourceTag(set, d))
			return err
		})
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	n := sum(counts)
	if len(counts) == 1 {
		fmt.Fprintf(m.Stderr, "exported %d page%s\n", n, plural(n))
		return nil
	}
	parts := make([]string, len(counts))
	for i, c := range counts {
		parts[i] = fmt.Sprintf("%s %d", set.Dirs[i].Dir, c)
	}
	fmt.Fprintf(m.Stderr, "exported %d page%s from %d data directories (%s)\n", n, plural(n), len(counts), strings.Join(parts, ", "))
	return nil
}

// sourceTag is what an export of several data directories records as the
// directory of d's pages: d as given to --data; "" (nothing) for one.
func sourceTag(set *crawler.DataSet, d *crawler.Data) string {
	if len(set.Dirs) == 1 {
		return ""
	}
	return d.Dir
}
