package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/contentseen/redisindex"
	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/frontier/redisfrontier"
	"github.com/simcrawl/simcrawl/internal/demosite"
	"github.com/simcrawl/simcrawl/internal/redisconn"
	"github.com/simcrawl/simcrawl/storage"
)

// The distributed benchmark (-workers 1,2,4) crawls one site (an index page
// linking every article, a copy every 10th) once in this process without
// a backend, then for each count N with N worker processes (this program
// with -dist-worker) sharing a fresh redis-server (memory only) on
// 127.0.0.1. It prints pages/s over the wall time, Redis round trips per
// page (counted by a go-redis hook in each worker: one per command or
// pipeline sent) and whether the decisions are the single process's: the
// same numbers stored and dropped, one page of each pair of copies stored,
// every other page stored, none twice.

// workerResult is what a worker process prints on stdout.
type workerResult struct {
	Fetched, Stored, Dropped int64
	RoundTrips               int64
}

// runDistWorker is one worker process of the distributed benchmark.
func runDistWorker(dir, addr, seed string, par int) error {
	ctx := context.Background()
	rt := &redisconn.RoundTrips{}
	rdb := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 4 * par})
	defer rdb.Close()
	rdb.AddHook(rt)
	q, err := redisfrontier.Open(ctx, rdb, redisfrontier.Options{Name: "bench", Worker: filepath.Base(dir),
		Options: frontier.Options{PerHostInFlight: 64, PerHostDelay: -1}})
	if err != nil {
		return err
	}
	defer q.Close()
	opts := crawlOptions(seed, dir, 0, par)
	idx, err := redisindex.Open(ctx, rdb, redisindex.Options{Name: "bench",
		SharedOptions: contentseen.SharedOptions{K: min(opts.WidestRadius(), contentseen.DefaultLayout().MaxK())}})
	if err != nil {
		return err
	}
	defer idx.Close()
	opts.Distributed = &crawler.Distributed{Queue: q, Index: idx, Worker: filepath.Base(dir), Budget: q}
	c, err := crawler.Open(opts)
	if err != nil {
		return err
	}
	sum, err := c.Run(ctx)
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := q.Leave(ctx); err != nil {
		return err
	}
	r := sum.Run
	return json.NewEncoder(os.Stdout).Encode(workerResult{Fetched: r.Fetched, Stored: r.Stored,
		Dropped: r.DroppedExact + r.DroppedNear, RoundTrips: rt.N()})
}

// runDistributed runs the distributed benchmark for each worker count.
func runDistributed(counts []int, pages, size, par int) error {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return fmt.Errorf("-workers needs redis-server (apt-get install -y redis-server): %w", err)
	}
	site := &demosite.Generated{N: pages, DupEvery: 10, PageBytes: size, IndexPage: true}
	base, stop, err := serve(site)
	if err != nil {
		return err
	}
	defer stop()
	tmp, err := os.MkdirTemp("", "crawlbench-dist-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	dir := filepath.Join(tmp, "single")
	start := time.Now()
	c, err := crawler.Open(crawlOptions(base+"/", dir, 0, par))
	if err != nil {
		return err
	}
	sum, err := c.Run(context.Background())
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	el := time.Since(start)
	want := sum.Run.Stored
	fmt.Printf("pages=%d bytes/page=%d parallelism=%d per process\n", pages, size, par)
	fmt.Printf("1 process, no backend: %.1fs %.1f pages/s, stored %d, dropped %d; %s\n", el.Seconds(),
		float64(sum.Run.Fetched)/el.Seconds(), sum.Run.Stored, sum.Run.DroppedExact+sum.Run.DroppedNear,
		checkDecisions(site, base, []string{dir}))

	for _, n := range counts {
		if err := benchWorkers(bin, site, base, filepath.Join(tmp, "w"+strconv.Itoa(n)), n, par, want); err != nil {
			return err
		}
	}
	return nil
}

func benchWorkers(bin string, site *demosite.Generated, base, dir string, n, par int, want int64) error {
	addr, stopRedis, err := startRedis(bin, dir)
	if err != nil {
		return err
	}
	defer stopRedis()
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	var dirs []string
	start := time.Now()
	for i := range n {
		d := filepath.Join(dir, "worker-"+strconv.Itoa(i))
		dirs = append(dirs, d)
		cmd := exec.Command(os.Args[0], "-dist-worker", d, "-redis", addr, "-seed", base+"/", "-parallelism", strconv.Itoa(par))
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, os.Stderr
		if err := cmd.Start(); err != nil {
			return err
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	var total workerResult
	var errs []error
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			errs = append(errs, fmt.Errorf("worker %d: %w", i, err))
			continue
		}
		var r workerResult
		if err := json.Unmarshal([]byte(outs[i].String()), &r); err != nil {
			errs = append(errs, fmt.Errorf("worker %d: %w", i, err))
			continue
		}
		total.Fetched += r.Fetched
		total.Stored += r.Stored
		total.Dropped += r.Dropped
		total.RoundTrips += r.RoundTrips
	}
	el := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	same := "same stored count as 1 process"
	if total.Stored != want {
		same = fmt.Sprintf("STORED %d, 1 process %d", total.Stored, want)
	}
	fmt.Printf("%d worker processes, one redis: %.1fs %.1f pages/s, stored %d, dropped %d, %.2f redis round trips per page; %s; %s\n",
		n, el.Seconds(), float64(total.Fetched)/el.Seconds(), total.Stored, total.Dropped,
		float64(total.RoundTrips)/float64(total.Fetched), same, checkDecisions(site, base, dirs))
	return nil
}

// checkDecisions says whether the data directories together hold one page
// of each pair of copies of site, every other page, and none twice.
func checkDecisions(site *demosite.Generated, base string, dirs []string) string {
	stored := map[string]int{}
	for _, dir := range dirs {
		d, err := crawler.OpenData(dir, time.Second)
		if err != nil {
			return "cannot read " + dir + ": " + err.Error()
		}
		err = d.Store.PageHeaders(context.Background(), func(p *storage.Page) error {
			stored[strings.TrimPrefix(p.URL, base)]++
			return nil
		})
		if cerr := d.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "cannot read " + dir + ": " + err.Error()
		}
	}
	var bad []string
	for i := range site.N {
		p := "/p/" + strconv.Itoa(i)
		switch {
		case stored[p] > 1:
			bad = append(bad, p+" stored twice")
		case site.IsDuplicate(i) && stored[p]+stored["/p/"+strconv.Itoa(i-1)] != 1:
			bad = append(bad, fmt.Sprintf("copies /p/%d and %s: %d stored", i-1, p, stored[p]+stored["/p/"+strconv.Itoa(i-1)]))
		case !site.IsDuplicate(i) && !site.IsDuplicate(i+1) && stored[p] != 1:
			bad = append(bad, p+" not stored")
		}
	}
	if len(bad) == 0 {
		return "decisions: one of each pair of copies stored, every other page once"
	}
	if len(bad) > 5 {
		bad = append(bad[:5], fmt.Sprintf("and %d more", len(bad)-5))
	}
	return "WRONG DECISIONS: " + strings.Join(bad, "; ")
}

// serve serves h on a free port of 127.0.0.1.
func serve(h http.Handler) (base string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() {
		if err := srv.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "crawlbench: stop server:", err)
		}
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "crawlbench: server:", err)
		}
	}, nil
}

// startRedis runs a memory-only redis-server on a free port with its
// files in dir and waits until it answers.
func startRedis(bin, dir string) (addr string, stop func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr = ln.Addr().String()
	if err := ln.Close(); err != nil {
		return "", nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no",
		"--daemonize", "no", "--loglevel", "warning")
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if rdb.Ping(context.Background()).Err() == nil {
			return addr, stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("redis-server on %s did not answer", addr)
		}
	}
}
