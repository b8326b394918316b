package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
)

func (m *Main) runExport(ctx context.Context, args []string) (err error) {
	fset := m.newFlagSet("export")
	format := fset.String("format", "jsonl", "output format: jsonl, or warc (WARC/1.1 response records with raw bodies and a\nmetadata record carrying the fingerprint, gzip per record: a .warc.gz)")
	out := fset.String("out", "", "output file (default: standard output)")
	var cf configFlags
	m.addConfigFlags(fset, &cf)
	if err := fset.Parse(args); err != nil {
		return err
	}
	if *format != "jsonl" && *format != "warc" {
		return usageErrorf(fset, "export: unknown --format %q (supported: jsonl, warc)", *format)
	}
	data, err := m.openData(cf, "export")
	if err != nil {
		return err
	}
	defer func() {
		if cerr := data.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("export: close: %w", cerr)
		}
	}()
	defer data.Recover(&err)

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
	var n int
	if *format == "warc" {
		n, err = exportWARC(ctx, data.Store, bw)
	} else {
		n, err = data.Store.ExportJSONL(ctx, bw)
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
	fmt.Fprintf(m.Stderr, "exported %d page%s\n", n, plural(n))
	return nil
}
