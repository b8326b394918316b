package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simcrawl/simcrawl/warc"
)

// corpusPages lists the real pages of ../shared/corpus (readability cases'
// source.html, gne-zh articles), or skips.
func corpusPages(b *testing.B) []string {
	b.Helper()
	root := filepath.Join("..", "..", "..", "shared", "corpus")
	if _, err := os.Stat(root); err != nil {
		b.Skip("no ../shared/corpus")
	}
	var pages []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if !d.IsDir() && (name == "source.html" || strings.HasPrefix(p, filepath.Join(root, "gne-zh")) && strings.HasSuffix(name, ".html")) {
			pages = append(pages, p)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return pages
}

// corpusInput writes the corpus repeated to at least n pages, each copy
// under its own URL, as a .warc.gz or JSON Lines (url, html) file in dir.
// Copies after the first round are exact duplicates of the first.
func corpusInput(b *testing.B, dir, format string, n int) (path string, pages int) {
	b.Helper()
	files := corpusPages(b)
	path = filepath.Join(dir, "corpus."+format)
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	ww := warc.NewWriter(bw, true)
	enc := json.NewEncoder(bw)
	date := warc.FormatDate(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	for round := 0; pages < n; round++ {
		for i, p := range files {
			body, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			u := fmt.Sprintf("http://copy%d.example/%d", round, i)
			if format == "jsonl" {
				err = enc.Encode(map[string]string{"url": u, "html": string(body)})
			} else {
				_, err = ww.WriteRecord(warc.Header{
					{Name: "WARC-Type", Value: warc.TypeResponse}, {Name: "WARC-Record-ID", Value: warc.NewRecordID()},
					{Name: "WARC-Date", Value: date}, {Name: "WARC-Target-URI", Value: u},
					{Name: "Content-Type", Value: "application/http; msgtype=response"},
				}, warc.ResponseBlock(200, http.Header{"Content-Type": {"text/html; charset=utf-8"}}, body))
			}
			if err != nil {
				b.Fatal(err)
			}
			pages++
		}
	}
	if err := bw.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path, pages
}

// BenchmarkDedupCorpus times `crawl dedup` on ../shared/corpus repeated to
// 10,000 pages into a fresh data directory (about 180 kept, the rest exact
// duplicates), end to end: reading, extraction, fingerprinting, the
// commits; one record per transaction (batch=1) and the default, batches
// (batch=0: the input is far above 1 MiB). Run it with -benchtime 1x.
func BenchmarkDedupCorpus(b *testing.B) {
	for _, format := range []string{"warc.gz", "jsonl"} {
		for _, batch := range []int{1, 0} {
			b.Run(fmt.Sprintf("format=%s/batch=%d", format, batch), func(b *testing.B) {
				dir := b.TempDir()
				input, pages := corpusInput(b, dir, format, 10000)
				runDedupBench(b, dir, input, batch, pages, "pages/s")
			})
		}
	}
}

// runDedupBench runs `crawl dedup --batch batch` on input into a fresh data
// directory under dir per iteration (removed outside the timer) and reports
// units (records of the input) per second as metric.
func runDedupBench(b *testing.B, dir, input string, batch, units int, metric string) {
	st, err := os.Stat(input)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		data := filepath.Join(dir, fmt.Sprintf("data%d", i))
		m := &Main{Stdin: strings.NewReader(""), Stdout: &strings.Builder{}, Stderr: &strings.Builder{}}
		args := []string{"dedup", "--input", input, "--data", data, "--set", "log.level=warn", "--batch", fmt.Sprint(batch)}
		if err := m.Run(context.Background(), args); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := os.RemoveAll(data); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(units)*float64(b.N)/b.Elapsed().Seconds(), metric)
}
