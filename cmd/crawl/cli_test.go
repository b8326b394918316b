package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// A mistake in the command line is a usage error: one line saying what is
// wrong (with a guess at what was meant), a hint where to read the usage,
// never the whole usage, and exit status 2.
func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		msg  string // in the message
		hint string // the hint's command: Run 'crawl help <hint>'
	}{
		{nil, "no command given", ""},
		{[]string{"demp"}, `unknown command "demp"; did you mean "demo"?`, ""},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`, ""},
		{[]string{"help", "exprot"}, `help: unknown command "exprot"; did you mean "export"?`, ""},
		{[]string{"help", "index", "biuld"}, `did you mean "index build"?`, "index"},
		{[]string{"--seedz", "x"}, "flag provided but not defined: -seedz (did you mean --seeds?)", "crawl"},
		{[]string{"--seeds"}, "flag needs an argument: -seeds", "crawl"},
		{[]string{"crawl"}, "--seeds FILE is required", "crawl"},
		{[]string{"--seeds", "s.txt", "extra"}, `unexpected argument "extra"`, "crawl"},
		{[]string{"dups", "--hots", "x"}, "dups: flag provided but not defined: -hots (did you mean --host?)", "dups"},
		{[]string{"dups", "shwo"}, `dups: unexpected argument "shwo"; did you mean "dups show"?`, "dups"},
		{[]string{"dups", "--reason", "far"}, `dups: --reason "far"`, "dups"},
		{[]string{"dups", "show"}, "dups show: want exactly one URL", "dups show"},
		{[]string{"index"}, "index: want a subcommand", "index"},
		{[]string{"index", "jion"}, `did you mean "index join"?`, "index"},
		{[]string{"index", "build", "--seedz"}, "index build: flag provided but not defined: -seedz", "index build"},
		{[]string{"index", "build", "--data", dir}, "--out FILE is required", "index build"},
		{[]string{"distance", "a"}, "distance: want two files, got 1", "distance"},
		{[]string{"extract"}, "extract: want at least one FILE or URL", "extract"},
		{[]string{"demo", "--kep"}, "(did you mean --keep?)", "demo"},
		{[]string{"stats", "--jsno"}, "(did you mean --json?)", "stats"},
		{[]string{"export", "--format", "xml"}, `export: unknown --format "xml"`, "export"},
		{[]string{"dups", "--min-distance", "-3"}, "dups: --min-distance -3: want >= 0", "dups"},
		{[]string{"dups", "--min-distance", "5", "--max-distance", "2"}, "is below --min-distance 5", "dups"},
		{[]string{"repair", "--data", dir}, "repair: --out NEWDIR is required", "repair"},
		{[]string{"check", "extra"}, `check: unexpected argument "extra"`, "check"},
		{[]string{"demo", "extra"}, `demo: unexpected argument "extra"`, "demo"},
		// --data "" (an unset variable) is no directory, never the config's.
		{[]string{"--seeds", "s.txt", "--data", ""}, `invalid value "" for flag -data: want a data directory, got an empty string`, "crawl"},
		{[]string{"stats", "--data", dir, "--data", ""}, `stats: invalid value "" for flag -data: want a data directory`, "stats"},
		{[]string{"fingerprint", "--features", "wrods", "a.html"}, `fingerprint: --features: parse options "wrods"`, "fingerprint"},
		{[]string{"distance", "--features", "wrods", "a.html", "b.html"}, `distance: --features: parse options "wrods"`, "distance"},
		{[]string{"eval", "--pairs", "p.jsonl", "--features", "words,wrods"}, `eval: --features: parse options "wrods"`, "eval"},
		{[]string{"index", "build", "--from", "fps.txt", "--out", "x.db", "--layout", "5x5"}, `index build: --layout: unknown layout "5x5"`, "index build"},
		{[]string{"index", "migrate", "--data", dir, "--layout", "5x5"}, `index migrate: --layout: unknown layout "5x5"`, "index migrate"},
		{[]string{"dedup", "--input", "x", "--format", "xml"}, `dedup: unknown --format "xml"`, "dedup"},
		{[]string{"dedup", "--input", "x", "--batch", "-1"}, `dedup: --batch -1`, "dedup"},
		{[]string{"eval", "--pairs", "p.jsonl", "--similarity", "2"}, `eval: --similarity, --containment and --size-ratio must be in (0, 1], got 2`, "eval"},
		{[]string{"eval", "--pairs", "p.jsonl", "--short-k", "99"}, `eval: --short-k must be 0..64`, "eval"},
		{[]string{"extract", "--base", "example.org/a", "p.html"}, `extract: --base "example.org/a": want an absolute http(s) URL`, "extract"},
		{[]string{"export", "--data", dir, "extra"}, `export: unexpected argument "extra"`, "export"},
		// A listen address that cannot work on any machine, before anything is opened.
		{[]string{"serve", "--data", dir, "--addr", "127.0.0.1:99999"}, `serve: --addr: want host:port, e.g. 127.0.0.1:8080, got "127.0.0.1:99999"`, "serve"},
		{[]string{"serve", "--data", dir, "--addr", "localhost"}, `serve: --addr: want host:port`, "serve"},
		{[]string{"--seeds", "s.txt", "--ui", "nonsense"}, `--ui: want host:port, e.g. 127.0.0.1:8080, got "nonsense"`, "crawl"},
		{[]string{"--seeds", "s.txt", "--metrics", "127.0.0.1:70000"}, `metrics: want host:port`, "crawl"},
	} {
		out, stderr, err := run(t, "", tc.args...)
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Errorf("%q: err = %v, want a usage error", tc.args, err)
			continue
		}
		var rep bytes.Buffer
		status := report(&rep, err)
		hint := "Run 'crawl help' for the commands.\n"
		if tc.hint != "" {
			hint = fmt.Sprintf("Run 'crawl help %s' for usage.\n", tc.hint)
		}
		if status != exitUsage || !strings.HasPrefix(rep.String(), "crawl: ") || !strings.Contains(rep.String(), tc.msg) ||
			!strings.HasSuffix(rep.String(), hint) || strings.Count(rep.String(), "\n") != 2 {
			t.Errorf("%q: exit %d, printed:\n%s\nwant exit 2, one line with %q, then %q", tc.args, status, rep.String(), tc.msg, hint)
		}
		if out != "" || stderr != "" {
			t.Errorf("%q: wrote more than the error: stdout %q, stderr %q", tc.args, out, stderr)
		}
	}
}

// Only command-line mistakes are usage errors.
func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("export: no crawl data in x"), 1},
		{&usageError{cmd: "crawl", err: errors.New("bad")}, 2},
		{fmt.Errorf("demo: %w", errNothingFetched), 3},
		{context.Canceled, 130},
		{fmt.Errorf("crawl: %w", context.Canceled), 130},
		{errServeStopped, 130},
	} {
		var b bytes.Buffer
		if got := report(&b, tc.err); got != tc.want {
			t.Errorf("report(%v) = %d, want %d (printed %q)", tc.err, got, tc.want, b.String())
		}
	}
}

// The real process exits 2 on a usage error, 0 on --version.
func TestExitStatusOfTheProcess(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"demp"}, 2},
		{[]string{"--version"}, 0},
	} {
		cmd, stderr := startCrawlProcess(t, tc.args...)
		err := cmd.Wait()
		var ee *exec.ExitError
		status := 0
		if errors.As(err, &ee) {
			status = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if status != tc.want {
			t.Errorf("crawl %q exited %d, want %d; stderr:\n%s", tc.args, status, tc.want, stderr)
		}
	}
}

// Errors read as sentences: the repository's package names, which say
// where in the code an error arose, are left out.
func TestErrorText(t *testing.T) {
	for in, want := range map[string]string{
		"crawler: create data directory: mkdir x: not a directory":      "create data directory: mkdir x: not a directory",
		"crawler: open d/crawl.db: storage: contentseen: index closed":  "open d/crawl.db: index closed",
		"dedup: crawler: dedup: read: unexpected EOF":                   "dedup: read: unexpected EOF",
		"export: crawler: no crawl data in x: stat x/crawl.db: no such": "export: no crawl data in x: stat x/crawl.db: no such",
		"a\ncrawler: b":                                    "a\nb",
		"seeds.txt:3: not a URL: crawlers: fine":           "seeds.txt:3: not a URL: crawlers: fine",
		"open /tmp/storage: x/crawler: read: no such file": "open /tmp/storage: x/crawler: read: no such file",
	} {
		if got := errorText(errors.New(in)); got != want {
			t.Errorf("errorText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestVersion(t *testing.T) {
	out, _, err := run(t, "", "--version")
	if err != nil || !strings.HasPrefix(out, "crawl github.com/simcrawl/simcrawl") || strings.Count(out, "\n") != 1 {
		t.Errorf("--version: %v, %q", err, out)
	}
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/simcrawl/simcrawl", Version: "v0.3.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.time", Value: "2026-11-25T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	if got, want := versionLine(bi, true), "crawl github.com/simcrawl/simcrawl v0.3.0 (revision 0123abcd, 2026-11-25T10:00:00Z, with uncommitted changes) go1.26.8"; got != want {
		t.Errorf("versionLine = %q, want %q", got, want)
	}
	bi.Main.Version, bi.Settings = "(devel)", nil
	if got := versionLine(bi, true); !strings.Contains(got, "(devel) (no VCS revision recorded") {
		t.Errorf("versionLine without VCS = %q", got)
	}
}

// `crawl --help` lists the crawl's own flags beside the commands.
func TestHelpListsCrawlFlags(t *testing.T) {
	out, _, err := run(t, "", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"-seeds", "-retry-failed", "-metrics", "-config", "-data", "-set", "--version"} {
		if !strings.Contains(out, f) {
			t.Errorf("--help does not mention %s:\n%s", f, out)
		}
	}
}

// A data directory that is a file, or below one, is named as such.
func TestDataDirIsAFile(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "notes.txt", "x")
	seeds := writeFile(t, dir, "seeds.txt", "http://127.0.0.1:1/\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--seeds", seeds, "--data", file}, "the data directory " + file + " is a file: pass a directory"},
		{[]string{"--seeds", seeds, "--data", filepath.Join(file, "sub")}, "since " + file + " is a file: pass a directory"},
		{[]string{"demo", "--data", file}, "is a file: pass a directory"},
		{[]string{"export", "--data", file}, "export: " + file + " is a file: pass the data directory of a crawl"},
		{[]string{"stats", "--data", file}, "stats: " + file + " is a file: pass the data directory of a crawl"},
		{[]string{"dedup", "--input", seeds, "--data", file}, "is a file: pass a directory"},
	} {
		_, _, err := run(t, "", tc.args...)
		if err == nil || !strings.Contains(errorText(err), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.args, err, tc.want)
		}
	}
}

// The first Ctrl-C says what stops: serve has no work to save.
func TestStoppingMessage(t *testing.T) {
	if m := stoppingMessage([]string{"serve", "--data", "d"}); strings.Contains(m, "saved") || !strings.Contains(m, "web view") {
		t.Errorf("serve: %q", m)
	}
	for _, args := range [][]string{{"--seeds", "s.txt"}, nil} {
		if m := stoppingMessage(args); !strings.Contains(m, "the work is saved") {
			t.Errorf("%q: %q", args, m)
		}
	}
	// dedup fetches nothing: no requests in flight, no fetch.timeout.
	if m := stoppingMessage([]string{"dedup", "--input", "x"}); strings.Contains(m, "request") || !strings.Contains(m, "saved") {
		t.Errorf("dedup: %q speaks of requests", m)
	}
}

// A mistake in the configuration, in config.yaml or in --set (an unknown
// key, a value of the wrong kind, a value that fails validation), is a
// usage error of every command that reads it, as a mistyped flag is: its
// message, a hint naming the command's help, exit status 2.
func TestConfigErrorsAreUsageErrors(t *testing.T) {
	dir := t.TempDir()
	typo := writeFile(t, dir, "typo.yaml", "fetch:\n  perhost: 2\n")
	data := filepath.Join(dir, "data")
	commands := [][]string{
		{"--seeds", filepath.Join(dir, "seeds.txt")},
		{"crawl", "--seeds", filepath.Join(dir, "seeds.txt")},
		{"check", "--data", data},
		{"repair", "--data", data, "--out", filepath.Join(dir, "new")},
		{"stats"},
		{"export"},
		{"failed"},
		{"dups"},
		{"serve", "--addr", "127.0.0.1:0"},
		{"dedup", "--input", dir, "--data", data},
		{"index", "migrate", "--data", data, "--layout", "4x16"},
		{"index", "build", "--data", data, "--out", filepath.Join(dir, "idx")},
		{"extract", typo},
	}
	mistakes := []struct {
		args []string
		msg  string
	}{
		{[]string{"--config", typo}, "unknown key fetch.perhost (did you mean fetch.per_host?)"},
		{[]string{"--set", "fetch.dealy=1s"}, "--set fetch.dealy: unknown key fetch.dealy (did you mean fetch.delay?)"},
		{[]string{"--set", "fetch.delay=abc"}, "--set fetch.delay: "},
		{[]string{"--set", "fetch.parallelism=0"}, "config: fetch.parallelism: "},
	}
	for _, c := range commands {
		hint := c[0]
		if strings.HasPrefix(hint, "-") {
			hint = "crawl"
		}
		for _, mk := range mistakes {
			args := append(append([]string{}, c...), mk.args...)
			_, _, err := run(t, "", args...)
			var rep bytes.Buffer
			status := report(&rep, err)
			want := fmt.Sprintf("Run 'crawl help %s' for usage.\n", hint)
			if status != exitUsage || !strings.Contains(rep.String(), mk.msg) || !strings.HasSuffix(rep.String(), want) {
				t.Errorf("%q: exit %d, printed:\n%s\nwant exit 2, %q, then %q", args, status, rep.String(), mk.msg, want)
			}
		}
	}
}
