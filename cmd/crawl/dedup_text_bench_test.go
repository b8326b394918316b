package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simcrawl/simcrawl/internal/demosite"
)

// textInput writes n JSON Lines records with text only (no html: extraction
// is skipped) of about 150 made-up words each: every 10th record an exact
// copy of the one before, every 10th (offset 5) the one before with its
// last words replaced (a near or a distinct page, as the bits fall).
func textInput(tb testing.TB, dir string, n int) string {
	tb.Helper()
	path := filepath.Join(dir, fmt.Sprintf("text%d.jsonl", n))
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	enc := json.NewEncoder(bw)
	var prev []string
	for i := range n {
		var words []string
		switch {
		case i%10 == 9 && prev != nil:
			words = prev
		case i%10 == 5 && prev != nil:
			words = append(append([]string(nil), prev[:145]...), demosite.Words(uint64(n+i), 5)...)
		default:
			words = demosite.Words(uint64(i), 150)
		}
		prev = words
		if err := enc.Encode(map[string]string{"url": fmt.Sprintf("http://text.example/%d", i), "text": strings.Join(words, " ") + "."}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := bw.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkDedupText times `crawl dedup` over JSON Lines records with text
// only, where extraction is skipped and the cost is fingerprinting and
// committing, into a fresh data directory: per record (--batch 1: one
// fsync'd transaction each) and in batches (--batch 4096). Run it with
// -benchtime 1x.
func BenchmarkDedupText(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		for _, batch := range []int{1, 4096} {
			if n == 100000 && batch == 1 && os.Getenv("SIMCRAWL_BIG") == "" {
				continue // about ten minutes here; SIMCRAWL_BIG=1 runs it
			}
			b.Run(fmt.Sprintf("n=%.0e/batch=%d", float64(n), batch), func(b *testing.B) {
				dir := b.TempDir()
				runDedupBench(b, dir, textInput(b, dir, n), batch, n, "records/s")
			})
		}
	}
}
