package main

import (
	"net"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simcrawl/simcrawl/internal/demosite"
)

// TestCrawlMetricsFlag crawls the demo site with --metrics on a free port.
// The config key names a busy port: the flag wins over it.
func TestCrawlMetricsFlag(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	srv := httptest.NewServer(demosite.New())
	defer srv.Close()
	dir := t.TempDir()
	seeds := writeFile(t, dir, "seeds.txt", srv.URL+"/\n")

	out, stderr, err := run(t, "", "--seeds", seeds, "--data", filepath.Join(dir, "data"),
		"--set", "metrics="+busy.Addr().String(), "--metrics", "127.0.0.1:0",
		"--set", "fetch.delay=0s", "--set", "fetch.parallelism=1")
	if err != nil {
		t.Fatalf("crawl --metrics 127.0.0.1:0: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "serving metrics") || !strings.Contains(stderr, "/metrics") {
		t.Errorf("stderr does not say where the metrics are:\n%s", stderr)
	}
	if !strings.Contains(out, "pages stored") {
		t.Errorf("no summary:\n%s", out)
	}
}

func TestCrawlMetricsBadAddress(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dir := t.TempDir()
	// Nothing listens here: a crawl that got this far would fail on it.
	seeds := writeFile(t, dir, "seeds.txt", "http://127.0.0.1:1/\n")
	data := filepath.Join(dir, "data")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"flag without port", []string{"--metrics", "localhost"}, `--metrics: config: metrics: want host:port`},
		{"config key without port", []string{"--set", "metrics=nope"}, `config: metrics: want host:port, e.g. 127.0.0.1:9090, got "nope"`},
		{"busy port", []string{"--metrics", busy.Addr().String()}, `crawler: metrics address "` + busy.Addr().String() + `"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--seeds", seeds, "--data", data}, tc.args...)
			_, stderr, err := run(t, "", args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("crawl %v: error %v, want one containing %q", tc.args, err, tc.want)
			}
			if strings.Contains(stderr, "progress") || strings.Contains(stderr, "failed") {
				t.Errorf("crawled before failing:\n%s", stderr)
			}
		})
	}
}
