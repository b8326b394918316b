package main

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A bad flag's error is printed once: by main, with a hint instead of the
// usage (the flag package would print it before the usage as well).
func TestBadFlagErrorOnce(t *testing.T) {
	for _, args := range [][]string{{"--seedz", "x"}, {"index", "build", "--seedz"}} {
		_, stderr, err := run(t, "", args...)
		var ue *usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "flag provided but not defined: -seedz") {
			t.Errorf("%q: err = %v, want a usage error naming the flag", args, err)
		}
		if stderr != "" {
			t.Errorf("%q: the command wrote to stderr besides returning the error:\n%s", args, stderr)
		}
	}
}

func TestHelpFlagAndSubcommands(t *testing.T) {
	for _, args := range [][]string{{"help", "-h"}, {"help", "--help"}} {
		out, _, err := run(t, "", args...)
		if err != nil || !strings.Contains(out, "Usage:") || !strings.Contains(out, "crawl dups") {
			t.Errorf("%q: err %v, output:\n%s", args, err, out)
		}
	}
	for _, args := range [][]string{{"help", "dups show"}, {"help", "dups", "show"}} {
		out, _, err := run(t, "", args...)
		if err != nil || !strings.HasPrefix(out, "Usage: crawl dups show") {
			t.Errorf("%q: err %v, output:\n%s", args, err, out)
		}
	}
	for _, args := range [][]string{{"help", "dups", "nope"}, {"help", "stats show"}, {"help", "nope"}} {
		if _, _, err := run(t, "", args...); err == nil || !strings.Contains(err.Error(), "unknown command") {
			t.Errorf("%q: err %v, want unknown command", args, err)
		}
	}
}

// Every command that reads a data directory names itself in its errors.
func TestReadOnlyCommandsNameThemselves(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nonexist")
	for _, args := range [][]string{
		{"export", "--data", missing},
		{"failed", "--data", missing},
		{"dups", "--data", missing},
		{"dups", "show", "--data", missing, "http://example.com/"},
		{"stats", "--data", missing},
		{"eval", "--pairs", missing},
	} {
		_, _, err := run(t, "", args...)
		want := args[0] + ": "
		if args[1] == "show" {
			want = "dups show: "
		}
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: err %v, want prefix %q", args, err, want)
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("a read-only command created %s (stat: %v)", missing, err)
	}
}

// A crawl whose only page is a 404: nothing stored or dropped, one
// failed URL (exit status 3). The counts read "1 failed URL", and dups
// gives no hint.
func TestCountsWithOneAndNone(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	dir := t.TempDir()
	seeds := writeFile(t, dir, "seeds.txt", srv.URL+"/\n")
	data := filepath.Join(dir, "data")
	if _, _, err := run(t, "", "--seeds", seeds, "--data", data,
		"--set", "fetch.delay=0s", "--set", "log.level=warn"); !errors.Is(err, errNothingFetched) {
		t.Fatalf("crawl: %v, want errNothingFetched", err)
	}

	_, stderr, err := run(t, "", "failed", "--data", data)
	if err != nil || !strings.HasPrefix(stderr, "1 failed URL;") {
		t.Errorf("failed: err %v, stderr %q", err, stderr)
	}
	out, _, err := run(t, "", "stats", "--data", data)
	if err != nil || !strings.Contains(out, "Failed   1 URL\n") || !strings.Contains(out, "Stored   0 pages") {
		t.Errorf("stats: err %v:\n%s", err, out)
	}
	out, _, err = run(t, "", "dups", "--data", data)
	if err != nil || out != "No dropped pages.\n" {
		t.Errorf("dups: err %v, output %q", err, out)
	}
	out, _, err = run(t, "", "dups", "--data", data, "--reason", "near")
	if err != nil || out != "No dropped page matches the filters.\n" {
		t.Errorf("dups --reason near: err %v, output %q", err, out)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"d5":           "d5",
		"/tmp/a-b_c.d": "/tmp/a-b_c.d",
		"my data":      "'my data'",
		"it's":         `'it'\''s'`,
		"":             "''",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
