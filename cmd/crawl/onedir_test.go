package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simcrawl/simcrawl/internal/demosite"
)

var updateOneDir = flag.Bool("update-onedir", false, "rewrite testdata/onedir/*.golden from this build's output")

// crawlRecord is one input line of the crawl the multi-directory tests
// split between workers: a text record of `crawl dedup`.
type crawlRecord struct {
	URL       string `json:"url"`
	Title     string `json:"title"`
	Text      string `json:"text,omitempty"`
	HTML      string `json:"html,omitempty"`
	FetchedAt string `json:"fetched_at"`
	worker    int    // 0 or 1: the worker that fetched it
}

// splitCorpus is six articles on two hosts and five copies of them, each
// fetched by one of two workers: worker 0 stores articles 0-2, worker 1
// articles 3-5, and the copies land on either, so that some duplicate a
// page their own worker stored and some a page of the other worker. Each
// worker also reads a binary body (skipped: non-html).
// Fetch times are fixed, so outputs are too.
func splitCorpus() []crawlRecord {
	var recs []crawlRecord
	at := func(i int) string { return fmt.Sprintf("2026-11-22T14:%02d:00.000Z", i) }
	article := func(i int) []string { return demosite.Words(uint64(7000+i), 150) }
	for i := range 6 {
		host := []string{"news.example", "blog.example"}[i%2]
		recs = append(recs, crawlRecord{URL: fmt.Sprintf("http://%s/article-%d", host, i), Title: fmt.Sprintf("Article %d", i),
			Text: strings.Join(article(i), " ") + ".", FetchedAt: at(i), worker: i / 3})
	}
	near := func(i int) string { // the last three words replaced
		w := article(i)
		return strings.Join(append(w[:147:147], demosite.Words(uint64(8000+i), 3)...), " ") + "."
	}
	for n, c := range []struct {
		url, text  string
		of, worker int
	}{
		{"http://mirror.example/article-0", recs[0].Text, 0, 0}, // a copy of its own worker's page
		{"http://mirror.example/article-1", near(1), 1, 1},      // of the other worker's
		{"http://mirror.example/article-3", recs[3].Text, 3, 0},
		{"http://mirror.example/article-4", near(4), 4, 1},
		{"http://syndic.example/article-0", recs[0].Text, 0, 1},
	} {
		recs = append(recs, crawlRecord{URL: c.url, Title: recs[c.of].Title + " (copy)", Text: c.text, FetchedAt: at(10 + n), worker: c.worker})
	}
	for w := range 2 { // a body that is not HTML: skipped
		recs = append(recs, crawlRecord{URL: fmt.Sprintf("http://news.example/blob-%d", w), HTML: "\x00\x01\x02\x03binary\x00",
			FetchedAt: at(20 + w), worker: w})
	}
	return recs
}

// writeRecords writes recs as JSON Lines in dir and returns the path.
func writeRecords(t *testing.T, dir, name string, recs []crawlRecord) string {
	t.Helper()
	var b strings.Builder
	for _, r := range recs {
		j, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(j, '\n'))
	}
	return writeFile(t, dir, name, b.String())
}

// dedupInto runs `crawl dedup` of recs into a new data directory name,
// with flags.
func dedupInto(t *testing.T, name string, recs []crawlRecord, flags ...string) string {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, name)
	in := writeRecords(t, dir, "in.jsonl", recs)
	if _, errs, err := run(t, "", append([]string{"dedup", "--data", data, "--input", in, "--set", "log.level=warn"}, flags...)...); err != nil {
		t.Fatalf("dedup into %s: %v\n%s", name, err, errs)
	}
	return data
}

// TestOneDataDirOutputUnchanged runs the reading commands on one data
// directory and compares what they print with testdata/onedir, which the
// commands wrote before they took several --data (main at a7b5f97, with
// -update-onedir): with one directory nothing may change, byte for byte.
func TestOneDataDirOutputUnchanged(t *testing.T) {
	data := dedupInto(t, "data", splitCorpus())
	for _, c := range []struct {
		name string
		args []string
	}{
		{"dups", []string{"dups"}},
		{"dups-json", []string{"dups", "--json"}},
		{"dups-near", []string{"dups", "--reason", "near"}},
		{"dups-show", []string{"dups", "show", "http://mirror.example/article-1"}},
		{"dups-show-stored", []string{"dups", "show", "http://news.example/article-0"}},
		{"stats", []string{"stats"}},
		{"stats-json", []string{"stats", "--json"}},
		{"export", []string{"export"}},
		{"failed", []string{"failed"}},
		{"failed-skipped", []string{"failed", "--skipped"}},
		{"failed-skipped-json", []string{"failed", "--skipped", "--json"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errs, err := run(t, "", append(c.args, "--data", data)...)
			got := fmt.Sprintf("stdout:\n%s\nstderr:\n%s\nerror: %v\n", out, errs, err)
			got = strings.ReplaceAll(got, data, "DATA")
			path := filepath.Join("testdata", "onedir", c.name+".golden")
			if *updateOneDir {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("crawl %s --data DATA printed\n%s\nwant (%s)\n%s", strings.Join(c.args, " "), got, path, want)
			}
		})
	}
}
