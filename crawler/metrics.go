package crawler

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Error kinds of simcrawl_errors_total besides the FetchError kinds.
const (
	errKindExtract     = "extract"     // the page could not be extracted
	errKindFingerprint = "fingerprint" // the text could not be fingerprinted
	errKindStore       = "store"       // recording an outcome failed: the crawl stops
	errKindOther       = "other"       // a fetch error that is not a *FetchError
)

// Reasons of simcrawl_pages_skipped_total.
const (
	skipNonHTML = "non-html"
	skipNoIndex = "noindex"
	skipRobots  = "robots"
	// skipRedirect: a redirect to a URL the crawl fetches on its own.
	skipRedirect = "redirect"
	// skipURLStored: the store holds a page under the URL (from a dedup).
	skipURLStored = "url-stored"
	// skipOutOfScope: a redirect out of the crawl's scope, not followed.
	skipOutOfScope = "out-of-scope"
)

// metrics are the Prometheus collectors of one Crawler, on a private
// registry so that two crawlers in one process (tests) never collide.
// Counters the Run's Stats already keep are exported with CounterFuncs
// reading them, so the metrics and the summary agree by construction; the
// labelled ones are updated where the pipeline decides. Safe for concurrent
// use.
type metrics struct {
	reg         *prometheus.Registry
	skipped     *prometheus.CounterVec // by reason
	errors      *prometheus.CounterVec // by kind
	contentSeen prometheus.Histogram   // fingerprint + duplicate lookup, per page

	mu     sync.Mutex // guards hosts and the label set of hostIn
	hosts  map[string]int
	hostIn *prometheus.GaugeVec // requests in flight by host; a host at 0 is deleted
}

func newMetrics(c *Crawler) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "simcrawl_pages_skipped_total",
			Help: "Pages fetched but neither stored nor dropped, by reason: non-html, noindex (meta robots or X-Robots-Tag), robots (robots.txt disallows), redirect (to a URL the crawl fetches on its own), url-stored, out-of-scope (a redirect the scope refuses, not followed).",
		}, []string{"reason"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "simcrawl_errors_total",
			Help: "URLs given up on, by kind: the fetch error kinds (timeout, connection, status, robots-unavailable, redirect-loop, too-many-redirects, bad-url, bad-encoding), extract, fingerprint; store errors stop the crawl.",
		}, []string{"kind"}),
		contentSeen: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "simcrawl_contentseen_seconds",
			Help:    "Time ContentSeen spends on one page: fingerprinting its text plus looking for an exact or near duplicate.",
			Buckets: prometheus.ExponentialBuckets(25e-6, 2, 12), // 25µs .. 51ms
		}),
		hosts: map[string]int{},
		hostIn: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "simcrawl_host_requests_in_flight",
			Help: "Fetches in flight per host (host:port); only hosts with a fetch in flight are listed.",
		}, []string{"host"}),
	}
	counter := func(name, help string, labels prometheus.Labels, v func() int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels},
			func() float64 { return float64(v()) })
	}
	const droppedHelp = "Pages dropped as duplicates of a stored page, by reason: exact (same text) or near (within k bits)."
	const frontierHelp = "URLs in the frontier by state: pending (queued or waiting for a retry) or in_flight (handed to a worker)."
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.skipped, m.errors, m.contentSeen, m.hostIn,
		counter("simcrawl_pages_fetched_total", "Pages fetched with a 2xx answer and read, this run.", nil, c.stats.fetched.Load),
		counter("simcrawl_pages_stored_total", "Pages stored, thin ones included, this run.", nil, c.stats.stored.Load),
		counter("simcrawl_pages_thin_total", "Pages stored as thin (too little text to judge), this run.", nil, c.stats.thin.Load),
		counter("simcrawl_pages_dropped_total", droppedHelp, prometheus.Labels{"reason": reasonExact}, c.stats.exact.Load),
		counter("simcrawl_pages_dropped_total", droppedHelp, prometheus.Labels{"reason": reasonNear}, c.stats.near.Load),
		counter("simcrawl_fetch_retries_total", "Fetches that failed and were queued again for a retry.", nil, c.stats.retries.Load),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "simcrawl_frontier_urls", Help: frontierHelp, ConstLabels: prometheus.Labels{"state": "pending"},
		}, func() float64 { return float64(c.queue.Stats().Pending) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "simcrawl_frontier_urls", Help: frontierHelp, ConstLabels: prometheus.Labels{"state": "in_flight"},
		}, func() float64 { return float64(c.queue.Stats().InFlight) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "simcrawl_index_fingerprints",
			Help: "Fingerprints in the ContentSeen index (stored, non-thin pages of all runs).",
		}, func() float64 { return float64(c.index.Len()) }),
	)
	return m
}

// skip counts a page skipped for reason, in Stats and in the metrics.
func (c *Crawler) skip(reason string) {
	c.stats.skipped.Add(1)
	c.metrics.skipped.WithLabelValues(reason).Inc()
}

// countError counts a URL given up on, in Stats and in the metrics.
func (c *Crawler) countError(kind string) {
	c.stats.errors.Add(1)
	c.metrics.errors.WithLabelValues(kind).Inc()
}

// fetching counts a fetch to rawURL's host as in flight until the returned
// function is called. Hosts at zero are deleted from the gauge, so its
// label set is bounded by the requests in flight, not by the hosts seen.
func (m *metrics) fetching(host string) (done func()) {
	m.mu.Lock()
	m.hosts[host]++
	m.hostIn.WithLabelValues(host).Set(float64(m.hosts[host]))
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.hosts[host]--; m.hosts[host] <= 0 {
			delete(m.hosts, host)
			m.hostIn.DeleteLabelValues(host)
			return
		}
		m.hostIn.WithLabelValues(host).Set(float64(m.hosts[host]))
	}
}

// Gatherer returns the registry holding the crawler's metrics (see the
// README's Metrics section), whether or not they are served over HTTP.
func (c *Crawler) Gatherer() prometheus.Gatherer { return c.metrics.reg }

// MetricsAddr returns the address the metrics server listens on, or nil
// when Options.MetricsAddr is empty. With a port of 0 it tells the port
// the system chose.
func (c *Crawler) MetricsAddr() net.Addr {
	if c.metricsSrv == nil {
		return nil
	}
	return c.metricsSrv.ln.Addr()
}

// metricsServer serves /metrics from Open until Close.
type metricsServer struct {
	ln   net.Listener
	srv  *http.Server
	done chan error // Serve's result, once

	closeOnce sync.Once
	closeErr  error
}

// listenMetrics binds addr before anything else in Open, so that a bad or
// busy address fails Open with a clear error and leaves no data directory.
func listenMetrics(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("crawler: metrics address %q: %w", addr, err)
	}
	return ln, nil
}

// serveMetrics serves reg's /metrics on ln until close.
func serveMetrics(ln net.Listener, reg *prometheus.Registry) *metricsServer {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	s := &metricsServer{
		ln:   ln,
		srv:  &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		done: make(chan error, 1),
	}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s
}

// close stops the server, giving scrapes in progress a few seconds, and
// waits for it. Later calls return the first one's result.
func (s *metricsServer) close() error {
	s.closeOnce.Do(func() { s.closeErr = s.shutdown() })
	return s.closeErr
}

func (s *metricsServer) shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, s.srv.Close())
	}
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("crawler: metrics server: %w", err)
	}
	return nil
}

// failureKind is the error kind of a failure reason from examine, by its
// prefix ("extract: ...").
func failureKind(failure string) string {
	switch {
	case strings.HasPrefix(failure, "extract:"):
		return errKindExtract
	case strings.HasPrefix(failure, "fingerprint:"):
		return errKindFingerprint
	case strings.HasPrefix(failure, "bad final url:"):
		return KindBadURL
	}
	return errKindOther
}
