package main

import (
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/simcrawl/simcrawl/crawler"
)

// The documented config.yaml at the repository root must decode to exactly
// the built-in defaults: it is their documentation.
func TestConfigYAMLIsTheDefaults(t *testing.T) {
	cfg, err := loadConfig("../../config.yaml", nil)
	if err != nil {
		t.Fatalf("loadConfig(config.yaml): %v", err)
	}
	if want := defaultConfig(); !reflect.DeepEqual(normalise(cfg), normalise(want)) {
		t.Errorf("config.yaml differs from defaultConfig():\n file     %+v\n defaults %+v", cfg, want)
	}
}

// normalise treats empty and nil lists alike.
func normalise(c Config) Config {
	for _, l := range []*[]string{&c.Scope.AllowDomains, &c.Scope.DenyDomains, &c.Scope.Include, &c.Scope.Exclude} {
		if len(*l) == 0 {
			*l = nil
		}
	}
	return c
}

func TestGoodConfig(t *testing.T) {
	cfg, err := loadConfig("testdata/config/good.yaml", nil)
	if err != nil {
		t.Fatalf("loadConfig: %v", err)
	}
	if cfg.Fetch.Delay != Duration(250*time.Millisecond) || cfg.Fetch.Parallelism != 16 ||
		cfg.Scope.MaxPages != 100 || len(cfg.Scope.AllowDomains) != 1 {
		t.Errorf("good.yaml decoded to %+v", cfg)
	}
	if cfg.Fetch.Timeout != defaultConfig().Fetch.Timeout {
		t.Errorf("keys absent from the file must keep their defaults: timeout %v", cfg.Fetch.Timeout)
	}
}

func TestBadConfigs(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string // every one must appear in the error
	}{
		{"unknown_key.bad.yaml", []string{"line 3", "unknown key fetch.delai"}},
		{"bad_duration.bad.yaml", []string{"line 2", `"soon" is not a duration`}},
		{"bad_size.bad.yaml", []string{"line 2", "not a size"}},
		{"bad_values.bad.yaml", []string{"contentseen.k", "fetch.parallelism"}},
		{"bad_regexp.bad.yaml", []string{"scope.exclude", "(unclosed"}},
		{"syntax.bad.yaml", []string{"syntax.bad.yaml", "line"}},
		{"bad_level.bad.yaml", []string{"log.level", "loud"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			_, err := loadConfig("testdata/config/"+tc.file, nil)
			if err == nil {
				t.Fatalf("loadConfig(%s) succeeded, want an error", tc.file)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("loadConfig(%s) = %q, want it to mention %q", tc.file, err, w)
				}
			}
		})
	}
}

func TestSetOverridesFile(t *testing.T) {
	cfg, err := loadConfig("testdata/config/good.yaml", []string{
		"fetch.delay=2s", "scope.allow_domains=[a.org, b.org]", "contentseen.features=char-shingles:4", "data=/tmp/x",
	})
	if err != nil {
		t.Fatalf("loadConfig: %v", err)
	}
	if cfg.Fetch.Delay != Duration(2*time.Second) {
		t.Errorf("fetch.delay = %v, want 2s from --set", cfg.Fetch.Delay)
	}
	if got := strings.Join(cfg.Scope.AllowDomains, ","); got != "a.org,b.org" {
		t.Errorf("scope.allow_domains = %q", got)
	}
	if cfg.Fetch.Parallelism != 16 {
		t.Errorf("fetch.parallelism = %d, want 16 from the file", cfg.Fetch.Parallelism)
	}
	if cfg.ContentSeen.Features != "char-shingles:4" || cfg.Data != "/tmp/x" {
		t.Errorf("--set not applied: %+v", cfg)
	}
}

func TestBadSet(t *testing.T) {
	for _, tc := range []struct{ set, want string }{
		{"fetch.delai=1s", "delai"},
		{"fetch.delay", "key=value"},
		{"=3", "key=value"},
		{"fetch..delay=1s", "empty key"},
		{"fetch.parallelism=-3", "fetch.parallelism"},
		{"fetch.delay=tomorrow", "not a duration"},
		{"fetch.per_hots=2", "unknown key fetch.per_hots"},
		{"scope.max_pages=abc", `"abc" is not a whole number`},
		{"scope.exclude=copies", "a list, written [a, b]"},
		{"contentseen.expected_pages=0", "contentseen.expected_pages: must be >= 1"},
		{"contentseen.expected_pages=lots", `"lots" is not a whole number`},
	} {
		_, err := loadConfig("", []string{tc.set})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--set %s: err = %v, want it to mention %q", tc.set, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "line ") {
			t.Errorf("--set %s: err = %v names a line of a file the user never wrote", tc.set, err)
		}
	}
}

func TestParseByteSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"10MiB", 10 << 20, true}, {"512KiB", 512 << 10, true}, {"1GB", 1e9, true},
		{"4096", 4096, true}, {"12B", 12, true}, {" 3MB ", 3e6, true},
		{"", 0, false}, {"MiB", 0, false}, {"-1MiB", 0, false}, {"1.5MiB", 0, false},
		{"10 parsecs", 0, false}, {"99999999999999999999", 0, false},
	} {
		got, err := parseByteSize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseByteSize(%q) = %d, %v; want %d, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func FuzzLoadConfigSet(f *testing.F) {
	for _, s := range []string{"fetch.delay=1s", "scope.include=[a, b]", "x=y", "a.b.c=[[", "data={}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cfg, err := loadConfig("", []string{s})
		if err == nil {
			if verr := cfg.Validate(); verr != nil {
				t.Fatalf("loadConfig accepted %q but Validate fails: %v", s, verr)
			}
		}
	})
}

// contentseen.layout=auto and contentseen.expected_pages reach the crawler.
func TestLayoutAutoConfig(t *testing.T) {
	cfg, err := loadConfig("", []string{"contentseen.layout=auto", "contentseen.expected_pages=200000000"})
	if err != nil {
		t.Fatal(err)
	}
	opts, err := crawlerOptions(cfg, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Layout != crawler.LayoutAuto || opts.ExpectedPages != 2e8 {
		t.Errorf("crawler options: layout %q, expected pages %d; want auto and 200000000", opts.Layout, opts.ExpectedPages)
	}
	if def := defaultConfig().ContentSeen.ExpectedPages; def != crawler.DefaultExpectedPages {
		t.Errorf("default contentseen.expected_pages = %d, want the crawler's %d", def, crawler.DefaultExpectedPages)
	}
}
