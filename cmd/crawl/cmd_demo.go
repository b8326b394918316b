package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/internal/demosite"
)

func (m *Main) runDemo(ctx context.Context, args []string) error {
	fset := m.newFlagSet("demo")
	data := fset.String("data", "", "data directory (default: a temporary one, removed afterwards unless --keep)")
	keep := fset.Bool("keep", false, "keep the temporary data directory and print its path")
	if err := fset.Parse(args); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		return usageErrorf(fset, "demo: unexpected argument %q", fset.Arg(0))
	}
	dir := *data
	if dir != "" {
		if err := checkDataDir(dir); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		// The demo site gets a new port every run: a second demo in the
		// same directory would mix two sites' pages.
		if _, err := os.Stat(filepath.Join(dir, crawler.DBFile)); err == nil {
			return fmt.Errorf("demo: %s already holds a crawl; give the demo a new directory", dir)
		}
	}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "simcrawl-demo-")
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		dir = tmp
		if !*keep {
			defer func() {
				if err := os.RemoveAll(tmp); err != nil {
					fmt.Fprintln(m.Stderr, "demo: remove the temporary data directory:", err)
				}
			}()
		}
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("demo: listen: %w", err)
	}
	srv := &http.Server{Handler: demosite.New(), ReadHeaderTimeout: 5 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	defer func() {
		// The crawl is over, so nothing is in flight; Shutdown would wait
		// for the client's idle keep-alive connections.
		if err := srv.Close(); err != nil {
			fmt.Fprintln(m.Stderr, "demo: stop server:", err)
		}
		if err := <-serveErr; !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(m.Stderr, "demo: server:", err)
		}
	}()

	base := "http://" + ln.Addr().String()
	fmt.Fprintf(m.Stdout, "Demo site at %s (articles, an exact mirror, syndicated copies with ads and counters,\n"+
		"a Chinese repost, thin pages, robots.txt disallowing /private/).\nCrawling into %s ...\n\n", base, dir)

	cfg := defaultConfig()
	cfg.Data = dir
	cfg.Fetch.Delay = 0 // our own server on loopback
	cfg.Fetch.PerHost = 4
	cfg.Fetch.Retries = 0
	cfg.Log.Level = "warn"
	if err := m.crawl(ctx, cfg, []string{base + "/"}, nil); err != nil {
		return err
	}
	logPath := filepath.Join(dir, "dropped.jsonl")
	fmt.Fprintf(m.Stdout, "\nFirst lines of the drop log (%s):\n", logPath)
	if err := printHead(m, logPath, 5); err != nil {
		return err
	}
	if *keep || *data != "" {
		fmt.Fprintf(m.Stdout, "\nData kept in %s: try `crawl export --data %s`.\n", dir, dir)
	} else {
		fmt.Fprintf(m.Stdout, "\nThe temporary data directory %s is removed as the demo ends; rerun with --keep (or --data DIR) to keep it.\n", dir)
	}
	return nil
}

func printHead(m *Main, path string, n int) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for i := 0; i < n && sc.Scan(); i++ {
		fmt.Fprintln(m.Stdout, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("demo: read drop log: %w", err)
	}
	return nil
}
