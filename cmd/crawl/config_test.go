package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/simcrawl/simcrawl/contentseen"
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
		doc  string   // when set, the file's text; else it is in testdata/config
		want []string // every one must appear in the error
	}{
		{"unknown_key.bad.yaml", "", []string{"line 3", "unknown key fetch.delai"}},
		{"bad_duration.bad.yaml", "", []string{"line 2", `"soon" is not a duration`}},
		{"bad_size.bad.yaml", "", []string{"line 2", "not a size"}},
		{"bad_values.bad.yaml", "", []string{"contentseen.k", "fetch.parallelism"}},
		{"bad_regexp.bad.yaml", "", []string{"scope.exclude", "(unclosed"}},
		{"syntax.bad.yaml", "", []string{"syntax.bad.yaml", "line"}},
		{"bad_level.bad.yaml", "", []string{"log.level", "loud"}},
		{"thresholds.yaml", "contentseen:\n  similarity: 1.5\n  containment: 0\n  size_ratio: -0.1\n",
			[]string{"contentseen.similarity: must be in (0, 1], got 1.5", "contentseen.containment", "contentseen.size_ratio"}},
		{"short_radius.yaml", "contentseen:\n  short_k: 65\n  short_features: -1\n",
			[]string{"contentseen.short_k: must be 0..64, got 65", "contentseen.short_features: must be >= 0, got -1"}},
		{"threshold_word.yaml", "contentseen:\n  similarity: high\n", []string{`line 2: "high"`}},
		// Values only the crawler used to check are the configuration's mistakes too.
		{"features.yaml", "contentseen:\n  features: wrods\n", []string{`contentseen.features: `, `"wrods"`}},
		{"layout.yaml", "contentseen:\n  layout: 5x5\n", []string{`contentseen.layout: `, `unknown layout "5x5"`}},
		{"layout_k.yaml", "contentseen:\n  layout: google16\n", []string{`contentseen.k: 7 exceeds layout google16, which answers k <= 3`}},
		{"domains.yaml", "scope:\n  allow_domains: [\"https://example.org/\"]\n  deny_domains: [example.org/news]\n",
			[]string{`scope.allow_domains: entry "https://example.org/" is a URL`, `scope.deny_domains: entry "example.org/news" is a path`}},

		// A float aimed at a whole number is an error, never truncated.
		{"fraction.yaml", "scope:\n  max_pages: 1.5\n", []string{`line 2: "1.5" is not a whole number`}},
		{"flow_fraction.yaml", "scope: {max_pages: 1.5}\n", []string{`line 1: "1.5" is not a whole number`}},
		{"parallelism.yaml", "fetch: {parallelism: 2.5}\n", []string{`"2.5" is not a whole number`}},
		{"exponent.yaml", "scope: {max_depth: 1e-1}\n", []string{`"1e-1" is not a whole number`}},
		{"int64.yaml", "contentseen:\n  expected_pages: 2.0000005e6\n", []string{`line 2: "2.0000005e6" is not a whole number`}},
		{"word.yaml", "scope:\n  max_pages: 1\n  max_depth: two\n", []string{`line 3: "two" is not a whole number`}},
		{"alias_fraction.yaml", "scope:\n  max_depth: &d 2.5\n  max_pages: *d\n", []string{`line 2: "2.5" is not a whole number`}},
		{"too_large.yaml", "scope:\n  max_pages: 99999999999999999999\n", []string{`line 2: "99999999999999999999" is out of range`}},
		// Every problem is named, in the order of the file.
		{"two_problems.yaml", "fetch:\n  delai: 1s\n  parallelism: 2.5\n",
			[]string{`line 2: unknown key fetch.delai (did you mean fetch.delay?); line 3: "2.5" is not a whole number`}},
		// A key that is nothing like one names where every key is listed.
		{"no_guess.yaml", "fetch:\n  colour: blue\n", []string{`line 2: unknown key fetch.colour (config.yaml at the repository root lists every key)`}},

		// Kinds are named in the file's terms, never as Go types.
		{"scalar_section.yaml", "scope: 1\n", []string{`line 1: "1" is not a section: scope holds keys (key: value)`}},
		{"list_section.yaml", "fetch:\n  - parallelism: 2\n", []string{`line 2: a list is not a section: fetch holds keys (key: value)`}},
		{"list_file.yaml", "- scope\n- fetch\n", []string{`line 1: the file must hold keys (key: value), not a list`}},
		{"scalar_file.yaml", "hello\n", []string{`line 1: the file must hold keys (key: value), not "hello"`}},
		{"section_list.yaml", "scope:\n  include: {a: b}\n", []string{`line 2: a section (key: value) is not a list, written [a, b]`}},
		{"list_number.yaml", "scope:\n  max_depth: [1]\n", []string{`line 2: a list is not a whole number`}},
		{"list_string.yaml", "log:\n  level: [info]\n", []string{`line 2: a list is not a string`}},
		{"list_duration.yaml", "fetch:\n  delay: [1s]\n", []string{`line 2: a list is not a duration`}},
		{"list_size.yaml", "fetch:\n  max_body_size: {a: 1}\n", []string{`line 2: a section (key: value) is not a size`}},
		{"twice.yaml", "scope:\n  &k max_depth: 3\n  *k: 4\n", []string{`line 3: key scope.max_depth is set twice`}},

		// Syntax errors name the line yaml.v3's parser counts from 0.
		{"open_flow.yaml", "data: d\nscope: {max_depth: 1\nfetch: {}\n", []string{`line 2: did not find expected ',' or '}'`}},
		{"list_after_map.yaml", "data: d\ndrop_log: \"\"\n- x\n", []string{`line 3: did not find expected key`}},
		// The scanner's own errors are counted from 1 already.
		{"bad_anchor.yaml", "data: d\nlog: {}\nfetch: &\n", []string{`line 3: did not find expected alphabetic or numeric character`}},

		// A value is shown as written, however long.
		{"long_list.yaml", "scope:\n  allow_domains: a.com,b.com\n", []string{`line 2: "a.com,b.com" is not a list, written [a, b]`}},
		{"long_bool.yaml", "store:\n  keep_drop_text: perhaps later\n", []string{`line 2: "perhaps later" is not true or false`}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := "testdata/config/" + tc.file
			if tc.doc != "" {
				path = filepath.Join(t.TempDir(), tc.file)
				if err := os.WriteFile(path, []byte(tc.doc), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := loadConfig(path, nil)
			if err == nil {
				t.Fatalf("loadConfig(%s) succeeded, want an error", tc.file)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("loadConfig(%s) = %q, want it to mention %q", tc.file, err, w)
				}
			}
			if strings.Contains(err.Error(), "main.") {
				t.Errorf("loadConfig(%s) = %q names a Go type", tc.file, err)
			}
		})
	}
}

// Whole numbers in every form YAML allows, and values that only look like
// numbers to the eye, still load after the check for fractions.
func TestConfigGoodValues(t *testing.T) {
	cfg, err := loadConfig("", []string{
		"scope.max_pages=1_000", "scope.max_depth=0x10", "fetch.parallelism=+7", "fetch.per_host=~",
		"fetch.delay=1.5s", "fetch.max_body_size=4096", "contentseen.expected_pages=3e9", "fetch.retries=2.0",
		"scope.allow_domains=[a.com, 1.5]", "log.level=info", "scope={max_pages: 3}",
	})
	if err != nil {
		t.Fatalf("loadConfig: %v", err)
	}
	got := []any{cfg.Scope.MaxPages, cfg.Scope.MaxDepth, cfg.Fetch.Parallelism, cfg.Fetch.PerHost,
		cfg.Fetch.Delay, cfg.Fetch.MaxBodySize, cfg.ContentSeen.ExpectedPages, strings.Join(cfg.Scope.AllowDomains, " "), cfg.Fetch.Retries}
	want := []any{3, 16, 7, defaultConfig().Fetch.PerHost,
		Duration(1500 * time.Millisecond), ByteSize(4096), int64(3e9), "a.com 1.5", 2}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded %v, want %v", got, want)
	}
	anchored := filepath.Join(t.TempDir(), "anchored.yaml")
	if err := os.WriteFile(anchored, []byte("scope:\nfetch:\n  parallelism: &n 4\n  per_host: *n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if cfg, err := loadConfig(anchored, nil); err != nil || cfg.Fetch.PerHost != 4 || cfg.Scope.MaxDepth != 5 {
		t.Errorf("loadConfig(anchored.yaml) = per_host %d, max_depth %d, %v; want 4, 5, nil", cfg.Fetch.PerHost, cfg.Scope.MaxDepth, err)
	}
}

// An empty --set value is the empty string, never "no change": YAML would
// read "metrics:" as null and keep the file's value.
func TestSetEmptyValue(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte("metrics: 127.0.0.1:9090\ndrop_log: x/d.jsonl\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(path, []string{"metrics=", "drop_log= "})
	if err != nil || cfg.Metrics != "" || cfg.DropLog != "" {
		t.Errorf("--set metrics= drop_log=: metrics %q, drop_log %q, %v; want both empty", cfg.Metrics, cfg.DropLog, err)
	}
	for _, set := range []string{"data=", "scope.max_pages=", "fetch.delay="} {
		if _, err := loadConfig(path, []string{set}); err == nil {
			t.Errorf("--set %s: accepted, want an error (the default kept silently before)", set)
		}
	}
}

// A ~ in data or drop_log is the home directory, as on a command line:
// nothing else expands it there, and it made a directory named "~".
func TestConfigPathsExpandHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	cfg, err := loadConfig("", []string{"data=~/crawl", "drop_log=~/logs/d.jsonl"})
	if err != nil || cfg.Data != filepath.Join(home, "crawl") || cfg.DropLog != filepath.Join(home, "logs/d.jsonl") {
		t.Errorf("data %q, drop_log %q, %v; want both under %s", cfg.Data, cfg.DropLog, err, home)
	}
	cfg, err = (&configFlags{data: "~"}).load()
	if err != nil || cfg.Data != home {
		t.Errorf("--data=~: data %q, %v; want %s", cfg.Data, err, home)
	}
	// Only a leading ~ alone or before a slash: ~user and a ~ inside stay.
	for _, p := range []string{"~other/x", "a/~/b", "x~"} {
		if cfg, err := loadConfig("", []string{"data=" + p}); err != nil || cfg.Data != p {
			t.Errorf("data=%s: %q, %v; want it unchanged", p, cfg.Data, err)
		}
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
		{"fetch.per_hots=2", "unknown key fetch.per_hots (did you mean fetch.per_host?)"},
		// A mistyped key gets the key it most likely meant.
		{"fetch.dealy=2s", "unknown key fetch.dealy (did you mean fetch.delay?)"},
		{"max_pages=5", "unknown key max_pages (did you mean scope.max_pages?)"},
		{"scope.delay=5s", "unknown key scope.delay (did you mean fetch.delay?)"},
		{"fetc.delay=5s", "unknown key fetc (did you mean fetch?)"},
		{"contentseen.layuot=auto", "unknown key contentseen.layuot (did you mean contentseen.layout?)"},
		{"scope.max_pages=abc", `"abc" is not a whole number`},
		{"scope.exclude=copies", "a list, written [a, b]"},
		{"contentseen.expected_pages=0", "contentseen.expected_pages: must be >= 1"},
		{"contentseen.expected_pages=lots", `"lots" is not a whole number`},
		{"scope.max_pages=1.5", `--set scope.max_pages: "1.5" is not a whole number`},
		{"fetch.parallelism=2.5", `"2.5" is not a whole number`},
		{"scope.max_depth=1e-1", `"1e-1" is not a whole number`},
		{"contentseen.expected_pages=1.5e0", `"1.5e0" is not a whole number`},
		{"scope=1", `--set scope: "1" is not a section: scope holds keys (key: value)`},
		{"scope=[a]", `a list is not a section: scope holds keys (key: value)`},
		{"scope.allow_domains=a.com,b.com", `"a.com,b.com" is not a list, written [a, b]`},
		{"store.keep_drop_text=perhaps later", `"perhaps later" is not true or false`},
		{"scope.max_pages=everything at once", `"everything at once" is not a whole number`},
		{"contentseen.features=wrods", `contentseen.features: `},
		{"contentseen.layout=5x5", `contentseen.layout: `},
		{"contentseen.layout=google16", `contentseen.k: 7 exceeds layout google16`},
		{"scope.allow_domains=[http://x/]", `scope.allow_domains: entry "http://x/" is a URL`},
		{"backend_settle=1s", `backend_settle: must be at least 3s, got 1s`},
		{"contentseen.index_memory=-1GiB", `is not a size`},
		{"contentseen.index_memory=lots", `"lots" is not a size`},
	} {
		_, err := loadConfig("", []string{tc.set})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--set %s: err = %v, want it to mention %q", tc.set, err, tc.want)
		}
		// Run makes a *configError exit 2, with the hint where to read the usage.
		if ce := (*configError)(nil); err != nil && !errors.As(err, &ce) {
			t.Errorf("--set %s: err = %v is not a mistake in the configuration (exit 2)", tc.set, err)
		}
		if err != nil && strings.Contains(err.Error(), "main.") {
			t.Errorf("--set %s: err = %v names a Go type", tc.set, err)
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

// With no allow_domains the crawler gets an empty list, so that it takes
// the seeds' hosts itself and lets a seed's redirect within its site
// extend them (crawler.Options documents it).
func TestNoAllowDomainsReachesTheCrawlerEmpty(t *testing.T) {
	cfg := defaultConfig()
	opts, err := crawlerOptions(cfg, []string{"http://www.example.org/"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(opts.Scope.AllowDomains) != 0 {
		t.Errorf("AllowDomains = %v, want none", opts.Scope.AllowDomains)
	}
}

// config.yaml's comment on contentseen.layout says how far each named
// layout answers, which is its MaxK (4x16 answers k = 7 by multi-probe; the
// comment said k <= 3 next to k: 7).
func TestConfigYAMLLayoutComment(t *testing.T) {
	b, err := os.ReadFile("../../config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	end := strings.Index(text, "\n  layout: ")
	start := strings.LastIndex(text[:end], "\n  # Permuted-table layout")
	if start < 0 || end < 0 {
		t.Fatal("config.yaml: no comment on contentseen.layout")
	}
	comment := strings.Join(strings.Fields(strings.ReplaceAll(text[start:end], "#", "")), " ")
	for _, name := range []string{"4x16", "10x28", "google16"} {
		l, err := contentseen.LayoutByName(name)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(regexp.QuoteMeta(name) + ` \([^)]*k up to (\d+)`).FindStringSubmatch(comment)
		if m == nil || m[1] != strconv.Itoa(l.MaxK()) {
			t.Errorf("config.yaml's layout comment on %s: %v; want %q (its MaxK)\n%s", name, m, fmt.Sprintf("k up to %d", l.MaxK()), comment)
		}
	}
}
