// Command crawlbench measures a whole crawl: it serves a generated site of
// realistic pages on 127.0.0.1 (internal/demosite.Generated: ~50 KB of
// real-shaped markup per page, near-duplicates, and enough extra links to
// grow a 100,000-URL frontier) and crawls it with the real pipeline into a
// temporary data directory. It prints pages/s, CPU seconds per page (user +
// system, server included), and the process's peak RSS.
//
// Run it once with ContentSeen on and once off; the CPU difference per page
// is what ContentSeen costs:
//
//	go run ./internal/crawlbench -contentseen=on
//	go run ./internal/crawlbench -contentseen=off
//
// Each mode runs in its own process so that peak RSS is its own.
//
// With -index N the crawl's index first gets N random fingerprints (in a
// process of its own), as a crawl that had stored N pages would hold: the
// crawl then runs, and its peak RSS is measured, against a large index.
// Small pages make many look-ups cheap:
//
//	go run ./internal/crawlbench -index 10000000 -pages 70000 -bytes 4000 -links 2
//
// The prefill also gives each of its pages a random sketch (1.4 GB of file
// at 10M), which the crawl's check of crawl.db at open reads and maps: the
// RSS after open and the peak include it.
//
// With -short F a share F of the articles are short (150 words, about 130
// distinct, under the crawler's short_features of 300), judged with the
// wider short radius (short_k 11, 548 index ranges instead of 68); -short 1
// makes them all short. -cpuprofile writes the crawl's CPU profile (server
// included), whose share under the judge (crawler.(*Crawler).judgeTx) and
// the fingerprint (contentseen.(*Fingerprinter).FingerprintSketch) is
// ContentSeen's share of a page's CPU without the crawl's own noise:
//
//	go run ./internal/crawlbench -index 1000000 -pages 20000 -bytes 4000 -links 2 -short 1 -cpuprofile short.pprof
//
// With -workers 1,2,4 it measures the distributed crawl instead: the same
// site crawled by 1, 2 and 4 worker processes sharing one local
// redis-server, against one process without it (distributed.go):
//
//	go run ./internal/crawlbench -workers 1,2,4 -pages 20000 -bytes 8000
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/internal/demosite"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "crawlbench:", err)
		os.Exit(1)
	}
}

func run() error {
	pages := flag.Int("pages", 2000, "article pages on the site (all are crawled)")
	size := flag.Int("bytes", 50_000, "approximate bytes per page")
	links := flag.Int("links", 50, "extra links per page to URLs beyond the crawl (frontier growth)")
	mode := flag.String("contentseen", "on", "on or off")
	par := flag.Int("parallelism", 8, "workers")
	verbose := flag.Bool("v", false, "log progress to stderr")
	prefill := flag.Int("index", 0, "first bulk-load this many random fingerprints into the crawl's index (in a process of its own), as an earlier crawl of that many pages would have left it")
	prefillInto := flag.String("prefill-into", "", "internal: only bulk-load -index fingerprints into this data directory's index")
	workers := flag.String("workers", "", "worker process counts, e.g. 1,2,4: the distributed benchmark on a local redis-server (distributed.go)")
	distWorker := flag.String("dist-worker", "", "internal: run one worker of the distributed benchmark into this data directory")
	redisAddr := flag.String("redis", "", "internal: the distributed benchmark's redis-server")
	seed := flag.String("seed", "", "internal: the distributed benchmark's seed")
	short := flag.Float64("short", 0, "share of the articles (0 to 1) that are short: -short-words words, judged with the short radius")
	shortWords := flag.Int("short-words", 150, "words in a short article (150: about 130 distinct; the crawler's short_features is 300)")
	cpuProfile := flag.String("cpuprofile", "", "write the crawl's CPU profile (go tool pprof) to this file")
	flag.Parse()
	if *distWorker != "" {
		return runDistWorker(*distWorker, *redisAddr, *seed, *par)
	}
	if *workers != "" {
		var counts []int
		for _, f := range strings.Split(*workers, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				return fmt.Errorf("-workers %q: want counts such as 1,2,4", *workers)
			}
			counts = append(counts, n)
		}
		return runDistributed(counts, *pages, *size, *par)
	}
	if *short < 0 || *short > 1 || *shortWords < 1 {
		return fmt.Errorf("-short %v -short-words %d: want a share from 0 to 1 and at least one word", *short, *shortWords)
	}
	if *mode != "on" && *mode != "off" {
		return fmt.Errorf("-contentseen must be on or off, not %q", *mode)
	}
	if *prefill > 0 && *mode == "off" {
		return fmt.Errorf("-index needs -contentseen=on")
	}
	if *prefillInto != "" {
		return prefillIndex(context.Background(), crawlOptions("http://127.0.0.1/", *prefillInto, 0, *par), *prefill)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	// The extra links go to "localhost", another name of this server whose
	// robots.txt asks for a 60 s Crawl-delay: they pile up in the frontier
	// (LinksPerPage per page) as on a real crawl with a slow host.
	site := &demosite.Generated{N: *pages, DupEvery: 10, LinksPerPage: *links, PageBytes: *size,
		ExtraLinkBase: fmt.Sprintf("http://localhost:%d", port), SlowHost: "localhost",
		ShortShare: *short, ShortWords: *shortWords}
	srv := &http.Server{Handler: site, ReadHeaderTimeout: 5 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	defer func() {
		if err := srv.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "crawlbench: stop server:", err)
		}
		if err := <-serveErr; !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "crawlbench: server:", err)
		}
	}()
	base := "http://" + ln.Addr().String()

	dir, err := os.MkdirTemp("", "crawlbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	stored := *pages // every page is stored without ContentSeen
	if *mode == "on" {
		stored -= (*pages - 1) / site.DupEvery
	}
	opts := crawlOptions(base+"/p/0", dir, stored, *par)
	opts.ContentSeenOff = *mode == "off"
	if *verbose {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
		opts.StatusInterval = time.Second
	}
	if *prefill > 0 {
		// In a process of its own: the bulk load's memory is not the
		// crawl's.
		start := time.Now()
		cmd := exec.Command(os.Args[0], "-prefill-into", dir, "-index", strconv.Itoa(*prefill), "-parallelism", strconv.Itoa(*par))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("prefill the index: %w", err)
		}
		fmt.Printf("index prefilled with %d fingerprints in %.1fs\n", *prefill, time.Since(start).Seconds())
	}
	c, err := crawler.Open(opts)
	if err != nil {
		return err
	}
	fmt.Printf("after open: RSS %s\n", procField("VmRSS:"))
	var ru0 syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru0); err != nil {
		return err
	}
	var prof *os.File
	if *cpuProfile != "" {
		if prof, err = os.Create(*cpuProfile); err != nil {
			return errors.Join(err, c.Close())
		}
		if err := pprof.StartCPUProfile(prof); err != nil {
			return errors.Join(err, prof.Close(), c.Close())
		}
	}
	start := time.Now()
	sum, err := c.Run(context.Background())
	elapsed := time.Since(start)
	if prof != nil {
		pprof.StopCPUProfile()
		if cerr := prof.Close(); err == nil {
			err = cerr
		}
	}
	seenSum, seenCount, gerr := contentSeenTime(c.Gatherer())
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = gerr
	}
	if err != nil {
		return err
	}
	var ru1 syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru1); err != nil {
		return err
	}
	cpu := cpuSeconds(ru1) - cpuSeconds(ru0)
	r := sum.Run
	fmt.Printf("contentseen=%s pages=%d bytes/page=%d short=%v (%d words) parallelism=%d\n", *mode, *pages, *size, *short, *shortWords, *par)
	fmt.Printf("fetched %d, stored %d, dropped %d exact + %d near, frontier pending at end %d\n",
		r.Fetched, r.Stored, r.DroppedExact, r.DroppedNear, sum.Frontier.Pending)
	fmt.Printf("elapsed %.2fs  %.1f pages/s  cpu %.2fs  %.2f ms cpu/page  peak RSS %s\n",
		elapsed.Seconds(), float64(r.Fetched)/elapsed.Seconds(), cpu, 1000*cpu/float64(r.Fetched), peakRSS())
	if seenCount > 0 {
		perPage := seenSum / float64(seenCount)
		fmt.Printf("contentseen %.1f us/page (fingerprint + duplicate look-up), %.1f%% of cpu/page\n",
			1e6*perPage, 100*perPage/(cpu/float64(r.Fetched)))
	}
	return nil
}

// crawlOptions are the crawl's options: seed, data directory, pages to
// store (the crawl's end) and workers.
func crawlOptions(seed, dir string, stored, par int) crawler.Options {
	return crawler.Options{
		Seeds:         []string{seed},
		DataDir:       dir,
		Scope:         crawler.Scope{AllowDomains: []string{"127.0.0.1", "localhost"}},
		MaxDepth:      100,
		MaxPages:      stored, // the crawl ends when the articles are done, the slow host's backlog left queued
		Parallelism:   par,
		PerHost:       par,
		MaxCrawlDelay: time.Minute,
		Retries:       1,
		Fetch:         crawler.DefaultFetchOptions(),
		K:             7,
		ShortK:        crawler.DefaultShortK,
		ShortFeatures: crawler.DefaultShortFeatures,
		IndexMemory:   crawler.DefaultIndexMemory, // the config's default
		KeepDropText:  true,
	}
}

// contentSeenTime reads the crawl's simcrawl_contentseen_seconds histogram:
// the time spent fingerprinting and looking for duplicates, per page.
func contentSeenTime(g prometheus.Gatherer) (sum float64, count uint64, err error) {
	mfs, err := g.Gather()
	if err != nil {
		return 0, 0, err
	}
	for _, mf := range mfs {
		if mf.GetName() != "simcrawl_contentseen_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			sum += m.GetHistogram().GetSampleSum()
			count += m.GetHistogram().GetSampleCount()
		}
	}
	return sum, count, nil
}

func cpuSeconds(ru syscall.Rusage) float64 {
	return time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime)).Seconds()
}

// peakRSS reads VmHWM, the process's peak resident set, from /proc.
func peakRSS() string { return procField("VmHWM:") }

// procField reads a field of /proc/self/status (a size, in kB).
func procField(name string) string {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
