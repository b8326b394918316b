package crawler

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/frontier"
)

// Options configures a Crawler. The zero value of a field means its
// default, except where said otherwise; cmd/crawl fills it from config.yaml.
type Options struct {
	Seeds   []string // absolute http(s) URLs, crawled at depth 0
	DataDir string   // holds crawl.db and, by default, dropped.jsonl
	DropLog string   // drop log path; "" = DataDir/dropped.jsonl

	scopeFromSeeds bool // Scope.AllowDomains were the seeds' hosts (set by setDefaults)

	Scope          Scope
	MaxDepth       int // links deeper than this from a seed are not followed
	MaxPages       int // stop after storing this many pages; 0 = no limit
	FollowNoFollow bool

	Parallelism   int           // workers, i.e. requests in flight in all; default 8
	PerHost       int           // requests in flight per host; default 2
	Delay         time.Duration // between request starts to one host; 0 = none
	MaxCrawlDelay time.Duration // cap on robots.txt Crawl-delay
	Retries       int
	RetryFailed   bool          // queue the URLs earlier runs recorded as failed again
	RetryBackoff  time.Duration // first retry delay; doubles per attempt
	Fetch         FetchOptions

	// K is the candidate radius in bits: stored pages whose SimHash is
	// within K bits are candidates, each verified by its sketch under
	// Thresholds before a drop (judge.go). Must be <= the layout's MaxK.
	K int
	// ShortK is the candidate radius for short texts, those with fewer
	// than ShortFeatures distinct features: a few edited or injected words
	// move more bits of a short text's SimHash (the curve is in the
	// judge's note, contentseen/doc.go). A short text takes the larger of
	// K and ShortK, at most the layout's MaxK (a layout answering less,
	// 10x28 or google16, gives short texts what it answers, and the log
	// says so). ShortFeatures 0 (the zero value, unlike the config's
	// default) makes no text short.
	ShortK        int
	ShortFeatures int
	// Thresholds verify candidates; zero fields take the defaults
	// (contentseen.DefaultThresholds).
	Thresholds contentseen.Thresholds
	Layout     string // contentseen layout name or LayoutAuto; default "4x16"
	// ExpectedPages is the number of pages the crawl expects to store, from
	// which LayoutAuto chooses the layout of a new index; default
	// DefaultExpectedPages. An existing index keeps its layout.
	ExpectedPages int64
	// IndexMemory is the most memory, in bytes, the index may take to hold
	// its tables decoded in memory beside its blocks in crawl.db, so that a
	// look-up reads no block (contentseen.BoltOptions.MemoryLimit: 56
	// bytes per stored page with 4x16 at the peak of a merge; at 10M pages a k = 7 look-up takes
	// some 25 µs instead of 190). 0 (the zero value, unlike the config's
	// default, DefaultIndexMemory) reads the blocks. Not used by a worker
	// of a distributed crawl (its judge looks up the shared index) nor with
	// ContentSeenOff.
	IndexMemory  int64
	Features     contentseen.Options
	KeepDropText bool
	// ContentSeenOff stores every page without fingerprinting or looking
	// for duplicates. It exists to measure what ContentSeen costs.
	ContentSeenOff bool

	Logger         *slog.Logger  // default: discard
	Status         io.Writer     // progress output; nil = none
	StatusTTY      bool          // Status is a terminal: redraw one line
	StatusInterval time.Duration // default 5s (250ms on a terminal)
	OpenTimeout    time.Duration // waiting for another process's lock; default 1s
	// MetricsAddr, when not empty, is a host:port on which Open starts
	// serving Prometheus metrics at /metrics until Close (port 0: any free
	// port, see Crawler.MetricsAddr).
	MetricsAddr string

	// Distributed, when set, makes this crawl one worker of a crawl shared
	// by many processes (see Distributed); nil is the single-process crawl.
	Distributed *Distributed
}

func (o *Options) setDefaults() {
	if o.Parallelism <= 0 {
		o.Parallelism = 8
	}
	if o.PerHost <= 0 {
		o.PerHost = 2
	}
	if o.Layout == "" {
		o.Layout = "4x16"
	}
	if o.ExpectedPages <= 0 {
		o.ExpectedPages = DefaultExpectedPages
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.StatusInterval <= 0 {
		o.StatusInterval = 5 * time.Second
	}
	if o.OpenTimeout <= 0 {
		o.OpenTimeout = time.Second
	}
	if len(o.Scope.AllowDomains) == 0 {
		o.Scope.AllowDomains = SeedHosts(o.Seeds)
		o.scopeFromSeeds = true
	}
	// As canonical URLs write them (bücher.de is xn--bcher-kva.de), so
	// that domains match the hosts of the URLs they are checked against.
	o.Scope.AllowDomains = canonicalDomains(o.Scope.AllowDomains)
	o.Scope.DenyDomains = canonicalDomains(o.Scope.DenyDomains)
	if o.DropLog == "" && o.DataDir != "" {
		o.DropLog = DefaultDropLog(o.DataDir)
	}
}

// DefaultDropLog is the drop log of data directory dir when Options.DropLog
// is not set.
func DefaultDropLog(dir string) string { return dir + "/dropped.jsonl" }

// The default radius for short texts and their bound, chosen from the
// curve in the judge's note (contentseen/doc.go, "Short texts"): under 300
// features the default k = 7 finds 0.55-0.97 of the copies, 11 finds
// 0.85-1.00, and the sketch kept every pair to keep at every radius up to
// 14. 11 costs what 8 does (4x16 probes 548 prefix ranges for k = 8..11).
const (
	DefaultShortK        = 11
	DefaultShortFeatures = 300
)

// DefaultIndexMemory is the config's default IndexMemory: 1 GiB, the
// tables of about 19M pages with 4x16.
const DefaultIndexMemory = 1 << 30

func (o *Options) validate() error {
	var errs []error
	if o.DataDir == "" {
		errs = append(errs, errors.New("crawler: no data directory"))
	}
	if o.K < 0 {
		errs = append(errs, fmt.Errorf("crawler: k = %d, want >= 0", o.K))
	}
	if o.ShortK < 0 {
		errs = append(errs, fmt.Errorf("crawler: short k = %d, want >= 0", o.ShortK))
	}
	if o.ShortFeatures < 0 {
		errs = append(errs, fmt.Errorf("crawler: short features = %d, want >= 0", o.ShortFeatures))
	}
	if o.IndexMemory < 0 {
		errs = append(errs, fmt.Errorf("crawler: index memory = %d, want >= 0", o.IndexMemory))
	}
	if err := o.Thresholds.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("crawler: %w", err))
	}
	if o.Retries < 0 {
		errs = append(errs, fmt.Errorf("crawler: retries = %d, want >= 0", o.Retries))
	}
	for _, ds := range []struct {
		key  string
		list []string
	}{{"allow_domains", o.Scope.AllowDomains}, {"deny_domains", o.Scope.DenyDomains}} {
		for _, d := range ds.list {
			if err := CheckDomain(d); err != nil {
				errs = append(errs, fmt.Errorf("crawler: scope %s entry %w", ds.key, err))
			}
		}
	}
	if o.Distributed != nil {
		errs = append(errs, o.Distributed.validate(o)...)
	}
	if o.DropLog != "" && o.DataDir != "" && !dropLogDirOK(o.DropLog, o.DataDir) {
		errs = append(errs, fmt.Errorf("crawler: drop log %s: no directory %s", o.DropLog, filepath.Dir(o.DropLog)))
	}
	return errors.Join(errs...)
}

// dropLogDirOK reports whether the drop log's directory exists or will:
// Open makes the data directory and its parents, nothing else. Checked
// before anything is created, so a bad path leaves nothing behind.
func dropLogDirOK(log, dataDir string) bool {
	dir, err1 := filepath.Abs(filepath.Dir(log))
	data, err2 := filepath.Abs(dataDir)
	if err1 != nil || err2 != nil {
		return true // Open reports it
	}
	if rel, err := filepath.Rel(dir, data); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return true // the data directory or one of its parents
	}
	st, err := os.Stat(dir)
	return err == nil && st.IsDir()
}

// Scope decides which URLs the crawl may visit. The zero Scope allows
// nothing beyond the seeds' hosts, which Open adds when AllowDomains is
// empty, with any host of the same site a seed redirects to (recorded in
// the data directory for resumed runs).
type Scope struct {
	AllowDomains []string         // a domain allows itself and its subdomains
	DenyDomains  []string         // wins over AllowDomains
	Include      []*regexp.Regexp // when not empty, a URL must match one
	Exclude      []*regexp.Regexp // a URL matching one is out of scope
}

// AllowsRedirect is Allows for the target u of a redirect (as requested,
// made canonical here). A seed's redirect may leave AllowDomains, as
// http://www.example.org/ answering from example.org is still the site the
// user named; DenyDomains, Include and Exclude hold for it too.
func (s Scope) AllowsRedirect(u *url.URL, fromSeed bool) (bool, string) {
	// A URL that cannot be made canonical (too long, say) is judged as it
	// is: the crawl then fails the page for its final URL, saying why.
	if cu, err := frontier.Canonical(u.String()); err == nil {
		if cu, err := url.Parse(cu); err == nil {
			u = cu
		}
	}
	if fromSeed {
		s.AllowDomains = []string{strings.ToLower(u.Hostname())}
	}
	return s.Allows(u)
}

// Allows reports whether the canonical URL u is in scope, and if not, why.
func (s Scope) Allows(u *url.URL) (bool, string) {
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	for _, d := range s.DenyDomains {
		if domainMatch(host, d) {
			return false, "denied domain " + d
		}
	}
	allowed := false
	for _, d := range s.AllowDomains {
		if domainMatch(host, d) {
			allowed = true
			break
		}
	}
	if !allowed {
		return false, "outside allowed domains"
	}
	raw := u.String()
	if len(s.Include) > 0 {
		in := false
		for _, re := range s.Include {
			if re.MatchString(raw) {
				in = true
				break
			}
		}
		if !in {
			return false, "matches no include pattern"
		}
	}
	for _, re := range s.Exclude {
		if re.MatchString(raw) {
			return false, "matches exclude pattern " + re.String()
		}
	}
	return true, ""
}

// canonicalDomains returns ds as canonical URLs write hosts: lower case,
// internationalised names in punycode, no leading or trailing dot.
func canonicalDomains(ds []string) []string {
	out := make([]string, 0, len(ds))
	for _, d := range ds {
		d = strings.Trim(strings.TrimSpace(d), ".")
		if d == "" {
			continue
		}
		if badDomain(d) != "" {
			out = append(out, d) // validate names it
			continue
		}
		if cu, err := frontier.Canonical("http://" + d + "/"); err == nil {
			if u, err := url.Parse(cu); err == nil && u.Hostname() != "" {
				d = u.Hostname()
			}
		}
		out = append(out, strings.ToLower(d))
	}
	return out
}

// badDomain says what is wrong with a scope domain that is not a host
// name ("" if nothing): a URL, a path, a pattern or a port would silently
// match nothing, or more than meant.
// CheckDomain returns why d cannot be an entry of Scope.AllowDomains or
// DenyDomains (a URL, a path, a pattern, a port), or nil. Open checks the
// options with it; a program checking its own configuration before it
// opens anything calls it too, so the mistake is reported as the user's.
func CheckDomain(d string) error {
	if why := badDomain(d); why != "" {
		return fmt.Errorf("%q is %s: write a host name, as example.org (its subdomains come with it)", d, why)
	}
	return nil
}

func badDomain(d string) string {
	switch {
	case strings.Contains(d, "://"):
		return "a URL"
	case strings.ContainsAny(d, "/?#"):
		return "a path"
	case strings.ContainsAny(d, "*? \t"):
		return "a pattern or spaces"
	case strings.Contains(d, ":") && net.ParseIP(strings.Trim(d, "[]")) == nil:
		return "a port"
	}
	return ""
}

func domainMatch(host, domain string) bool {
	domain = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(domain), "."))
	return host == domain || strings.HasSuffix(host, "."+domain)
}
