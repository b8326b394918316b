package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/contentseen/redisindex"
	"github.com/simcrawl/simcrawl/crawler"
)

// minSettle is the shortest backend_settle: a worker notices that Redis
// restarted within its heal interval (1 s) plus the longest retry backoff
// (redisconn.MaxBackoff, 2 s).
const minSettle = 3 * time.Second

// Config is the whole of config.yaml. The YAML keys are a user contract:
// extend, never rename. The documented default file at the repository root
// lists every key with its default; defaultConfig must agree with it (a test
// checks that decoding the file yields defaultConfig).
type Config struct {
	Data        string            `yaml:"data"`
	DropLog     string            `yaml:"drop_log"`
	Scope       ScopeConfig       `yaml:"scope"`
	Fetch       FetchConfig       `yaml:"fetch"`
	ContentSeen ContentSeenConfig `yaml:"contentseen"`
	Store       StoreConfig       `yaml:"store"`
	Log         LogConfig         `yaml:"log"`
	// Metrics is host:port for Prometheus metrics at /metrics; "" = off.
	Metrics string `yaml:"metrics"`
	// Backend, when set, is the redis:// URL of the server that shares the
	// crawl's frontier and ContentSeen index among workers (backend.go).
	Backend string `yaml:"backend"`
	// CrawlName namespaces the crawl's keys on the backend.
	CrawlName string `yaml:"crawl_name"`
	// BackendLease is how long a worker's URLs and pending claims stay
	// leased to it after it stops answering.
	BackendLease Duration `yaml:"backend_lease"`
	// BackendSettle is how long new claims wait after the backend's Redis
	// restarted, while every worker writes its recent claims again
	// (redisindex.Options.Settle).
	BackendSettle Duration `yaml:"backend_settle"`
}

// ScopeConfig says which URLs the crawl may visit.
type ScopeConfig struct {
	AllowDomains   []string `yaml:"allow_domains"`
	DenyDomains    []string `yaml:"deny_domains"`
	Include        []string `yaml:"include"`
	Exclude        []string `yaml:"exclude"`
	MaxDepth       int      `yaml:"max_depth"`
	MaxPages       int      `yaml:"max_pages"`
	FollowNoFollow bool     `yaml:"follow_nofollow"`
}

// FetchConfig is how pages are fetched and how politely.
type FetchConfig struct {
	UserAgent     string   `yaml:"user_agent"`
	Parallelism   int      `yaml:"parallelism"`
	PerHost       int      `yaml:"per_host"`
	Delay         Duration `yaml:"delay"`
	Timeout       Duration `yaml:"timeout"`
	Retries       int      `yaml:"retries"`
	RetryBackoff  Duration `yaml:"retry_backoff"`
	MaxBodySize   ByteSize `yaml:"max_body_size"`
	RespectRobots bool     `yaml:"respect_robots"`
	MaxCrawlDelay Duration `yaml:"max_crawl_delay"`
	MaxRedirects  int      `yaml:"max_redirects"`
}

// ContentSeenConfig tunes near-duplicate detection.
type ContentSeenConfig struct {
	K int `yaml:"k"`
	// ShortK is the candidate radius of short texts, those with fewer than
	// ShortFeatures distinct features (the larger of k and short_k).
	ShortK        int    `yaml:"short_k"`
	ShortFeatures int    `yaml:"short_features"`
	Layout        string `yaml:"layout"` // a layout name or "auto"
	// ExpectedPages is how many pages the crawl expects to store; with
	// layout auto it chooses the layout of a new index.
	ExpectedPages int64 `yaml:"expected_pages"`
	// IndexMemory bounds the memory that holds the index's tables decoded
	// beside crawl.db's blocks (0: read the blocks).
	IndexMemory ByteSize `yaml:"index_memory"`
	Features    string   `yaml:"features"`
	MinFeatures int      `yaml:"min_features"`
	// Similarity, Containment and SizeRatio verify each candidate within
	// k bits (contentseen.Thresholds).
	Similarity  float64 `yaml:"similarity"`
	Containment float64 `yaml:"containment"`
	SizeRatio   float64 `yaml:"size_ratio"`
}

// StoreConfig says what the page store keeps.
type StoreConfig struct {
	KeepDropText bool `yaml:"keep_drop_text"`
}

// LogConfig controls logging and progress reporting.
type LogConfig struct {
	Level          string   `yaml:"level"`
	StatusInterval Duration `yaml:"status_interval"`
}

func defaultConfig() Config {
	return Config{
		Data: "data",
		Scope: ScopeConfig{
			MaxDepth: 5,
		},
		Fetch: FetchConfig{
			UserAgent:     "simcrawl/0.1 (+https://github.com/simcrawl/simcrawl)",
			Parallelism:   8,
			PerHost:       2,
			Delay:         Duration(time.Second),
			Timeout:       Duration(30 * time.Second),
			Retries:       3,
			RetryBackoff:  Duration(2 * time.Second),
			MaxBodySize:   10 << 20,
			RespectRobots: true,
			MaxCrawlDelay: Duration(30 * time.Second),
			MaxRedirects:  10,
		},
		ContentSeen: ContentSeenConfig{
			K:             7,
			ShortK:        crawler.DefaultShortK,
			ShortFeatures: crawler.DefaultShortFeatures,
			Layout:        "4x16",
			ExpectedPages: crawler.DefaultExpectedPages,
			IndexMemory:   crawler.DefaultIndexMemory,
			Features:      "words",
			Similarity:    contentseen.DefaultMinSimilarity,
			Containment:   contentseen.DefaultMinContainment,
			SizeRatio:     contentseen.DefaultMinSizeRatio,
		},
		Store:         StoreConfig{KeepDropText: true},
		CrawlName:     "default",
		BackendLease:  Duration(30 * time.Second),
		BackendSettle: Duration(redisindex.DefaultSettle),
		Log: LogConfig{
			Level:          "info",
			StatusInterval: Duration(5 * time.Second),
		},
	}
}

// loadConfig returns the defaults overlaid with the file at path (when path
// is not empty) and then with each key=value of sets, in order. Decoding is
// strict: an unknown key, or a value of the wrong kind (1.5 for a whole
// number), is an error naming its line.
func loadConfig(path string, sets []string) (Config, error) {
	cfg := defaultConfig()
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return cfg, fmt.Errorf("read config: %w", err)
		}
		if err := decodeStrict(b, &cfg); err != nil {
			return cfg, &configError{fmt.Errorf("config %s: %w", path, err)}
		}
	}
	for _, s := range sets {
		if err := applySet(&cfg, s); err != nil {
			return cfg, &configError{err}
		}
	}
	for _, f := range []struct {
		key string
		p   *string
	}{{"data", &cfg.Data}, {"drop_log", &cfg.DropLog}} {
		v, err := expandHome(*f.p)
		if err != nil {
			return cfg, &configError{fmt.Errorf("config: %s: %w", f.key, err)}
		}
		*f.p = v
	}
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// expandHome replaces the leading ~ of a path written in config.yaml or
// --set with the home directory, as the shell does on a command line: no
// shell sees these values, and a directory named "~" made in the current
// one is never what was meant (and one rm -rf ~ away from a disaster).
func expandHome(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("%s: cannot expand ~: %w", p, err)
	}
	return filepath.Join(home, p[1:]), nil
}

// applySet overlays one --set key=value, where key is a dotted path such as
// fetch.delay. It builds the equivalent nested YAML document and decodes it
// strictly over cfg, so --set accepts exactly what the file accepts.
func applySet(cfg *Config, kv string) error {
	key, value, ok := strings.Cut(kv, "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" {
		return fmt.Errorf("--set %q: want key=value, e.g. fetch.delay=500ms", kv)
	}
	parts := strings.Split(key, ".")
	var doc strings.Builder
	for i, p := range parts {
		if p == "" {
			return fmt.Errorf("--set %q: empty key segment", kv)
		}
		fmt.Fprintf(&doc, "%s%s:", strings.Repeat("  ", i), p)
		if i < len(parts)-1 {
			doc.WriteString("\n")
		}
	}
	// Quote nothing: the value is YAML, so lists ([a, b]) and numbers work.
	// Except nothing at all: YAML reads "key:" as null, which decodes as
	// no change, so --set metrics= would keep the file's metrics address.
	// It means the empty string (an error for a number or a list).
	if strings.TrimSpace(value) == "" {
		value = `""`
	}
	fmt.Fprintf(&doc, " %s\n", value)
	if err := decodeStrict([]byte(doc.String()), cfg); err != nil {
		// Line numbers refer to the document built above, not to anything
		// the user wrote.
		return fmt.Errorf("--set %s: %s", key, reLinePrefix.ReplaceAllString(err.Error(), ""))
	}
	return nil
}

// Validate reports every bad field at once, as a *configError.
func (c *Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("config: %s: %s", field, fmt.Sprintf(format, args...)))
	}
	if c.Data == "" {
		bad("data", "must not be empty")
	}
	if c.Scope.MaxDepth < 0 {
		bad("scope.max_depth", "must be >= 0, got %d", c.Scope.MaxDepth)
	}
	if c.Scope.MaxPages < 0 {
		bad("scope.max_pages", "must be >= 0 (0 = no limit), got %d", c.Scope.MaxPages)
	}
	for _, list := range []struct {
		name string
		res  []string
	}{{"scope.include", c.Scope.Include}, {"scope.exclude", c.Scope.Exclude}} {
		for _, re := range list.res {
			if _, err := regexp.Compile(re); err != nil {
				bad(list.name, "bad regular expression %q: %v", re, err)
			}
		}
	}
	for _, ds := range []struct {
		key  string
		list []string
	}{{"scope.allow_domains", c.Scope.AllowDomains}, {"scope.deny_domains", c.Scope.DenyDomains}} {
		for _, d := range ds.list {
			if err := crawler.CheckDomain(d); err != nil {
				bad(ds.key, "entry %v", err)
			}
		}
	}
	f := c.Fetch
	if f.UserAgent == "" {
		bad("fetch.user_agent", "must not be empty")
	}
	if f.Parallelism < 1 || f.Parallelism > 1024 {
		bad("fetch.parallelism", "must be 1..1024, got %d", f.Parallelism)
	}
	if f.PerHost < 1 {
		bad("fetch.per_host", "must be >= 1, got %d", f.PerHost)
	}
	if f.Delay < 0 {
		bad("fetch.delay", "must be >= 0, got %v", f.Delay)
	}
	if f.Timeout <= 0 {
		bad("fetch.timeout", "must be > 0, got %v", f.Timeout)
	}
	if f.Retries < 0 {
		bad("fetch.retries", "must be >= 0, got %d", f.Retries)
	}
	if f.RetryBackoff < 0 {
		bad("fetch.retry_backoff", "must be >= 0, got %v", f.RetryBackoff)
	}
	if f.MaxBodySize < 1024 {
		bad("fetch.max_body_size", "must be at least 1KiB, got %d bytes", int64(f.MaxBodySize))
	}
	if f.MaxCrawlDelay < 0 {
		bad("fetch.max_crawl_delay", "must be >= 0, got %v", f.MaxCrawlDelay)
	}
	if f.MaxRedirects < 0 {
		bad("fetch.max_redirects", "must be >= 0, got %d", f.MaxRedirects)
	}
	cs := c.ContentSeen
	if cs.K < 0 || cs.K > 64 {
		bad("contentseen.k", "must be 0..64, got %d", cs.K)
	}
	if cs.ShortK < 0 || cs.ShortK > 64 {
		bad("contentseen.short_k", "must be 0..64, got %d", cs.ShortK)
	}
	if cs.ShortFeatures < 0 {
		bad("contentseen.short_features", "must be >= 0, got %d", cs.ShortFeatures)
	}
	if cs.IndexMemory < 0 {
		bad("contentseen.index_memory", "must be >= 0, got %d", cs.IndexMemory)
	}
	if cs.ExpectedPages < 1 {
		bad("contentseen.expected_pages", "must be >= 1, got %d", cs.ExpectedPages)
	}
	if _, err := contentseen.ParseOptions(cs.Features); err != nil {
		bad("contentseen.features", "%v", err)
	}
	// A named layout bounds k; auto chooses one that answers it, and a
	// reopened index's recorded layout is checked when the crawl opens it.
	if cs.Layout != crawler.LayoutAuto {
		if l, err := contentseen.LayoutByName(cs.Layout); err != nil {
			bad("contentseen.layout", "%v", err)
		} else if cs.K >= 0 && cs.K > l.MaxK() {
			bad("contentseen.k", "%d exceeds layout %s, which answers k <= %d (contentseen.layout: auto chooses one that answers it)", cs.K, l.Name(), l.MaxK())
		}
	}
	if cs.MinFeatures < 0 {
		bad("contentseen.min_features", "must be >= 0, got %d", cs.MinFeatures)
	}
	for _, f := range []struct {
		key string
		v   float64
	}{{"similarity", cs.Similarity}, {"containment", cs.Containment}, {"size_ratio", cs.SizeRatio}} {
		if !(f.v > 0 && f.v <= 1) {
			bad("contentseen."+f.key, "must be in (0, 1], got %v", f.v)
		}
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level", "must be debug, info, warn or error, got %q", c.Log.Level)
	}
	if c.Log.StatusInterval <= 0 {
		bad("log.status_interval", "must be > 0, got %v", c.Log.StatusInterval)
	}
	if c.Metrics != "" {
		if err := checkListenAddr(c.Metrics); err != nil {
			bad("metrics", "want host:port, e.g. 127.0.0.1:9090, got %q", c.Metrics)
		}
	}
	if c.Backend != "" {
		if _, err := parseBackend(c.Backend); err != nil {
			errs = append(errs, fmt.Errorf("config: backend: %w", err))
		}
	}
	if !validCrawlName.MatchString(c.CrawlName) {
		bad("crawl_name", "want 1 to 64 letters, digits, '.', '_' or '-', got %q", c.CrawlName)
	}
	if c.BackendLease < Duration(time.Second) {
		bad("backend_lease", "must be at least 1s, got %v", c.BackendLease)
	}
	// A shorter window would let a copy be claimed before the claims it
	// copies are written again.
	if c.BackendSettle < Duration(minSettle) {
		bad("backend_settle", "must be at least %v, got %v", minSettle, c.BackendSettle)
	}
	if len(errs) == 0 {
		return nil
	}
	return &configError{errors.Join(errs...)}
}

// configError is a mistake in the configuration: an unknown key, a value of
// the wrong kind or a failed validation, in the config file or in --set.
// Like a mistake in the flags, it is the user's to fix: Run makes it a
// usage error of the command that read the configuration (exit 2, with a
// hint where to read its usage). A config file that cannot be read is not
// one.
type configError struct{ err error }

func (e *configError) Error() string { return e.err.Error() }
func (e *configError) Unwrap() error { return e.err }

// Duration is a time.Duration written as a Go duration string ("1s", "250ms").
type Duration time.Duration

// UnmarshalYAML implements yaml.Unmarshaler.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: %s is not a duration (e.g. 500ms, 2s, 1m)", n.Line, written(n))
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML implements yaml.Marshaler.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

func (d Duration) String() string { return time.Duration(d).String() }

// ByteSize is a size in bytes written as "10MiB", "512KiB", "1GB" or a plain
// number of bytes.
type ByteSize int64

// UnmarshalYAML implements yaml.Unmarshaler.
func (s *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: %s is not a size (e.g. 10MiB, 512KiB, 1048576)", n.Line, written(n))
	}
	v, err := parseByteSize(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*s = ByteSize(v)
	return nil
}

var byteUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}, {"", 1},
}

func parseByteSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	for _, u := range byteUnits {
		num, ok := strings.CutSuffix(t, u.suffix)
		if !ok {
			continue
		}
		var n int64
		if _, err := fmt.Sscanf(strings.TrimSpace(num), "%d", &n); err != nil || n < 0 ||
			fmt.Sprint(n) != strings.TrimSpace(num) {
			break
		}
		if n > (1<<62)/u.mult {
			return 0, fmt.Errorf("%q is too large", s)
		}
		return n * u.mult, nil
	}
	return 0, fmt.Errorf("%q is not a size (e.g. 10MiB, 512KiB, 1048576)", s)
}
