package crawler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/internal/demosite"
)

// scrape GETs http://addr/metrics and returns its samples by series, e.g.
// `simcrawl_pages_dropped_total{reason="near"}`, leaving out comments.
func scrape(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s\n%s", resp.Status, b)
	}
	samples, err := parseSamples(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return samples
}

// parseSamples reads the text exposition format, enough for these tests.
func parseSamples(text string) (map[string]float64, error) {
	samples := map[string]float64{}
	for line := range strings.SplitSeq(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			return nil, fmt.Errorf("bad sample line %q", line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("bad sample line %q: %w", line, err)
		}
		samples[line[:i]] = v
	}
	return samples, nil
}

// sum adds the samples of the series whose name is name, any labels.
func sum(samples map[string]float64, name string) float64 {
	var s float64
	for k, v := range samples {
		if k == name || strings.HasPrefix(k, name+"{") {
			s += v
		}
	}
	return s
}

// TestMetricsDemoCrawl crawls the demo site (plus a 404 and a JSON seed, for
// an error and a non-HTML skip) with metrics served on a free port, scrapes
// them once while the home page is being fetched and once after Run, and
// checks them against the summary.
func TestMetricsDemoCrawl(t *testing.T) {
	site := demosite.New()
	var (
		metricsAddr atomic.Pointer[string]
		midOnce     sync.Once
		midc        = make(chan map[string]float64, 1)
		midErr      = make(chan error, 1)
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/feed.json":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"items": []}`)
			return
		case demosite.PathHome:
			// The crawler is waiting for this answer: its fetch is in flight.
			midOnce.Do(func() {
				resp, err := http.Get("http://" + *metricsAddr.Load() + "/metrics")
				if err != nil {
					midErr <- err
					return
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				if err != nil {
					midErr <- err
					return
				}
				samples, err := parseSamples(string(b))
				if err != nil {
					midErr <- err
					return
				}
				midc <- samples
			})
		}
		site.ServeHTTP(w, r)
	}))
	defer srv.Close()
	opts := testOptions(t, srv.URL+"/", srv.URL+"/gone", srv.URL+"/feed.json")
	opts.MetricsAddr = "127.0.0.1:0"

	c, err := Open(opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if _, err := net.Dial("tcp", c.MetricsAddr().String()); err == nil {
			t.Errorf("metrics server still listening after Close")
		}
	}()
	addr := c.MetricsAddr()
	if addr == nil {
		t.Fatal("MetricsAddr() = nil with Options.MetricsAddr set")
	}
	a := addr.String()
	metricsAddr.Store(&a)
	s, err := c.Run(context.Background())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var mid map[string]float64
	select {
	case err := <-midErr:
		t.Fatalf("scrape during the crawl: %v", err)
	case mid = <-midc:
	default:
		t.Fatal("the home page was never fetched")
	}

	host := frontier.HostKey(srv.URL + "/")
	for series, want := range map[string]float64{
		`simcrawl_host_requests_in_flight{host="` + host + `"}`: 1,
		`simcrawl_frontier_urls{state="in_flight"}`:             1,
	} {
		if got := mid[series]; got != want {
			t.Errorf("during the fetch of /: %s = %v, want %v", series, got, want)
		}
	}

	end := scrape(t, a)
	r := s.Run
	if r.Errors == 0 || r.Skipped == 0 || r.DroppedNear == 0 || r.DroppedExact == 0 {
		t.Fatalf("the crawl should have errors, skips and both kinds of drops: %+v", r)
	}
	for series, want := range map[string]float64{
		"simcrawl_pages_fetched_total":                 float64(r.Fetched),
		"simcrawl_pages_stored_total":                  float64(r.Stored),
		"simcrawl_pages_thin_total":                    float64(r.Thin),
		`simcrawl_pages_dropped_total{reason="exact"}`: float64(r.DroppedExact),
		`simcrawl_pages_dropped_total{reason="near"}`:  float64(r.DroppedNear),
		"simcrawl_fetch_retries_total":                 float64(r.Retries),
		// Every error of this crawl is a 404: /gone and a broken link.
		`simcrawl_errors_total{kind="status"}`:            float64(r.Errors),
		`simcrawl_pages_skipped_total{reason="non-html"}`: 1, // /feed.json
		`simcrawl_frontier_urls{state="pending"}`:         0,
		`simcrawl_frontier_urls{state="in_flight"}`:       0,
		// A fresh crawl indexes every stored page but the thin ones.
		"simcrawl_index_fingerprints": float64(r.Stored - r.Thin),
		// Every stored or dropped page was fingerprinted and looked up.
		"simcrawl_contentseen_seconds_count": float64(r.Stored + r.DroppedExact + r.DroppedNear),
	} {
		if got, ok := end[series]; !ok || got != want {
			t.Errorf("after the crawl: %s = %v (present %v), want %v", series, got, ok, want)
		}
	}
	if got := sum(end, "simcrawl_errors_total"); got != float64(r.Errors) {
		t.Errorf("simcrawl_errors_total sums to %v, summary says %d errors", got, r.Errors)
	}
	if got := sum(end, "simcrawl_pages_skipped_total"); got != float64(r.Skipped) {
		t.Errorf("simcrawl_pages_skipped_total sums to %v, summary says %d skipped", got, r.Skipped)
	}
	if got := end[`simcrawl_pages_skipped_total{reason="robots"}`]; got < 1 {
		t.Errorf("robots.txt skips = %v, want >= 1 (%s is disallowed)", got, demosite.PathPrivate)
	}
	if got := sum(end, "simcrawl_host_requests_in_flight"); got != 0 {
		t.Errorf("host gauge after the crawl sums to %v, want no series", got)
	}
	if s.Pages != int(r.Stored) || len(demosite.Stored) != int(r.Stored) {
		t.Errorf("stored %d this run, %d in all, want %d", r.Stored, s.Pages, len(demosite.Stored))
	}
	// The registry read directly agrees with the scrape.
	if got := testutil.ToFloat64(c.metrics.errors.WithLabelValues(KindStatus)); got != float64(r.Errors) {
		t.Errorf("registry: status errors = %v, want %d", got, r.Errors)
	}
}

func TestMetricsOff(t *testing.T) {
	c, err := Open(testOptions(t, "http://127.0.0.1:1/"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer c.Close()
	if addr := c.MetricsAddr(); addr != nil {
		t.Errorf("MetricsAddr() = %v without Options.MetricsAddr", addr)
	}
	// The metrics are kept all the same, for Gatherer.
	if _, err := c.Gatherer().Gather(); err != nil {
		t.Errorf("Gather: %v", err)
	}
}

func TestMetricsBadAddress(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, addr := range []string{"127.0.0.1:notaport", "no-colon", busy.Addr().String()} {
		t.Run(addr, func(t *testing.T) {
			opts := testOptions(t, "http://127.0.0.1:1/")
			opts.DataDir = filepath.Join(opts.DataDir, "new")
			opts.MetricsAddr = addr
			c, err := Open(opts)
			if err == nil {
				c.Close()
				t.Fatalf("Open with MetricsAddr %q succeeded, want an error", addr)
			}
			if !strings.Contains(err.Error(), "metrics address") || !strings.Contains(err.Error(), addr) {
				t.Errorf("error %q does not name the metrics address %q", err, addr)
			}
			// Nothing was created: the address is bound before the directory.
			if _, err := os.Stat(opts.DataDir); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("data directory after the failed Open: stat: %v, want not exist", err)
			}
			// The data directory was released.
			opts.MetricsAddr = ""
			c, err = Open(opts)
			if err != nil {
				t.Fatalf("reopen after the failed Open: %v", err)
			}
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
}

// TestMetricsHostGauge: a host is listed while it has fetches in flight and
// deleted at zero, so the label set stays bounded by the requests in flight.
func TestMetricsHostGauge(t *testing.T) {
	c, err := Open(testOptions(t, "http://127.0.0.1:1/"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer c.Close()
	m := c.metrics
	doneA1 := m.fetching("a.example")
	doneA2 := m.fetching("a.example")
	doneB := m.fetching("b.example:8080")
	if got := testutil.ToFloat64(m.hostIn.WithLabelValues("a.example")); got != 2 {
		t.Errorf("a.example in flight = %v, want 2", got)
	}
	doneA1()
	doneB()
	if n := testutil.CollectAndCount(m.hostIn); n != 1 {
		t.Errorf("%d host series after b.example finished, want 1", n)
	}
	doneA2()
	if n := testutil.CollectAndCount(m.hostIn); n != 0 {
		t.Errorf("%d host series with nothing in flight, want 0", n)
	}
}

// TestMetricsDocumented: every simcrawl_ metric has help text and is listed
// in the README's Metrics section.
func TestMetricsDocumented(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Open(testOptions(t, "http://127.0.0.1:1/"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer c.Close()
	c.metrics.skipped.WithLabelValues(skipRobots) // vectors appear once they have a child
	c.metrics.errors.WithLabelValues(KindStatus)
	c.metrics.fetching("x")
	mfs, err := c.Gatherer().Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	var names []string
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "simcrawl_") {
			names = append(names, mf.GetName())
			if mf.GetHelp() == "" {
				t.Errorf("%s has no help text", mf.GetName())
			}
		}
	}
	sort.Strings(names)
	if len(names) < 10 {
		t.Errorf("only %d simcrawl_ metrics: %v", len(names), names)
	}
	for _, n := range names {
		if !regexp.MustCompile(`\b` + n + `\b`).Match(readme) {
			t.Errorf("README.md does not list %s", n)
		}
	}
}

func TestFailureKind(t *testing.T) {
	for failure, want := range map[string]string{
		"extract: body too large": errKindExtract,
		"fingerprint: oops":       errKindFingerprint,
		"bad final url: parse":    KindBadURL,
		"something else":          errKindOther,
	} {
		if got := failureKind(failure); got != want {
			t.Errorf("failureKind(%q) = %q, want %q", failure, got, want)
		}
	}
}

// BenchmarkMetrics measures what metrics add to one page (a host in flight
// and back, one histogram observation) and what one scrape costs.
func BenchmarkMetrics(b *testing.B) {
	c, err := Open(Options{DataDir: b.TempDir(), K: 3, Fetch: FetchOptions{UserAgent: "simcrawl-test", Timeout: time.Second}})
	if err != nil {
		b.Fatalf("Open: %v", err)
	}
	defer c.Close()
	b.Run("per-page", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			done := c.metrics.fetching("example.org")
			done()
			c.metrics.contentSeen.Observe(0.0001)
		}
	})
	b.Run("gather", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Gatherer().Gather(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestMetricsServerCloseTwice(t *testing.T) {
	ln, err := listenMetrics("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := serveMetrics(ln, prometheus.NewRegistry())
	if got := sum(scrape(t, s.ln.Addr().String()), "promhttp_metric_handler_errors_total"); got != 0 {
		t.Errorf("scrape errors = %v, want 0", got)
	}
	for i := range 2 {
		if err := s.close(); err != nil {
			t.Errorf("close #%d: %v", i+1, err)
		}
	}
}
