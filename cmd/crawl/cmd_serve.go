package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/internal/webview"
)

// defaultUIAddr is where `crawl serve` listens unless told otherwise:
// loopback only, since the view has no authentication.
const defaultUIAddr = "127.0.0.1:8080"

func (m *Main) runServe(ctx context.Context, args []string) (err error) {
	fset := m.newFlagSet("serve")
	var cf configFlags
	fset.StringVar(&cf.config, "config", "", "config file (default: ./config.yaml when it exists, else built-in defaults)")
	fset.Var(&cf.dirs, "data", "data directory to show (repeatable: the directories of one crawl split across processes, shown as one crawl; default: the config's data key)")
	fset.Var(&cf.sets, "set", "override a config key, e.g. --set contentseen.k=3 (repeatable)")
	addr := fset.String("addr", defaultUIAddr, "address to listen on; anything but loopback is reachable by others, and the view has no authentication")
	if err := fset.Parse(args); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		return usageErrorf(fset, "serve: unexpected argument %q", fset.Arg(0))
	}
	if err := checkListenAddr(*addr); err != nil {
		return usageErrorf(fset, "serve: --addr: %v", err)
	}
	// Opened as the other reading commands open them: a directory named
	// twice is a usage error (its drops would show twice).
	set, cfg, err := m.openDataSet(fset, cf, "serve")
	if err != nil {
		if errors.Is(err, crawler.ErrLocked) {
			return fmt.Errorf("%w; to watch a running crawl start it with --ui ADDR", err)
		}
		return err
	}
	defer func() {
		if cerr := set.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("serve: close: %w", cerr)
		}
	}()
	// No Config: a data directory does not record the configuration it was
	// crawled with, and serve's own would be shown as the crawl's.
	view, err := webview.New(ctx, webview.Options{Sources: set.Dirs, K: cfg.ContentSeen.K})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	ln, err := listenUI(*addr, m.Stderr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer view.Close() // a stopped crawl's view reads nothing in the background
	asOne := ""
	if len(set.Dirs) > 1 {
		asOne = " (read as one crawl)"
	}
	fmt.Fprintf(m.Stdout, "Serving the crawl in %s%s at http://%s/ (Ctrl-C stops)\n", dirNames(set), asOne, ln.Addr())
	if err := serveUntil(ctx, ln, view); err != nil {
		return err
	}
	// Only Ctrl-C (or SIGTERM) ends serving: exit 130, as the README says
	// of every command interrupted.
	return errServeStopped
}

// checkListenAddr reports a listen address that cannot work whatever the
// machine: no port, or a port out of range. Such an address is a mistake
// in the command line (exit 2); one that is busy or not this machine's is
// found when it is opened.
func checkListenAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = net.LookupPort("tcp", port)
	}
	if err != nil {
		return fmt.Errorf("want host:port, e.g. %s, got %q", defaultUIAddr, addr)
	}
	return nil
}

// listenUI listens on addr for the web view and warns on w when the
// address is not loopback: the view has no authentication.
func listenUI(addr string, w io.Writer) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for the web view: %w", err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		fmt.Fprintf(w, "warning: the web view at http://%s/ has no authentication: anyone who can reach this address can read the crawl's pages\n", ln.Addr())
	}
	return ln, nil
}

// serveUntil serves h on ln until ctx is cancelled, then shuts down,
// letting requests in progress finish for up to five seconds.
func serveUntil(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("web view: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("web view: %w", err)
	}
	return nil
}

// configText is the configuration as YAML, for the overview page.
func configText(cfg Config) string {
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return fmt.Sprintf("(configuration not shown: %v)", err)
	}
	return string(b)
}

// liveCrawl is the running crawl as the web view sees it.
type liveCrawl struct {
	c     *crawler.Crawler
	start time.Time
}

func (l liveCrawl) Stats() crawler.Stats                { return l.c.Stats(l.start) }
func (l liveCrawl) HostDelay(host string) time.Duration { return l.c.HostDelay(host) }

// startUI serves the web view of the crawl c on ln until the returned
// stop is called (which waits for the server to stop).
func (m *Main) startUI(ctx context.Context, c *crawler.Crawler, cfg Config, ln net.Listener) (stop func() error, err error) {
	view, err := webview.New(ctx, webview.Options{Sources: []*crawler.Data{c.LiveData()},
		Live: liveCrawl{c: c, start: time.Now()}, Config: configText(cfg), K: cfg.ContentSeen.K})
	if err != nil {
		return nil, fmt.Errorf("--ui: %w", err)
	}
	fmt.Fprintf(m.Stderr, "Web view of this crawl at http://%s/\n", ln.Addr())
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() { done <- serveUntil(sctx, ln, view) }()
	return func() error {
		cancel()
		err := <-done
		view.Close() // waits for a background read of the database
		return err
	}, nil
}
