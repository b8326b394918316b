package main

import (
	"io"
	"reflect"
	"testing"

	"github.com/simcrawl/simcrawl/internal/copyweb"
)

// The web-of-copies harness (internal/copyweb) measures what a user gets
// from `crawl --seeds` with the default config; its options must stay those
// defaults, but for the delay between requests (none to its loopback
// server, as in `crawl demo`) and what only shows progress.
func TestCopywebCrawlsWithTheDefaultConfig(t *testing.T) {
	seed, dir := "http://127.0.0.1:1/w?p=home", t.TempDir()
	cfg := defaultConfig()
	cfg.Data = dir
	want, err := crawlerOptions(cfg, []string{seed}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	got, err := copyweb.CrawlOptions(seed, dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Delay != 0 {
		t.Errorf("copyweb delay %v, want 0", got.Delay)
	}
	want.Delay = 0
	want.Logger, want.Status, want.StatusTTY, want.StatusInterval = nil, nil, false, 0
	if !reflect.DeepEqual(got, want) {
		t.Errorf("copyweb.CrawlOptions differ from the default config's:\n got %+v\nwant %+v", got, want)
	}
}
