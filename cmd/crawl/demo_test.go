package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README's first command: crawl demo crawls its own site, prints the
// summary and the drop log's head, and removes its temporary directory
// unless told to keep it, saying which.
func TestDemo(t *testing.T) {
	out, errOut, err := run(t, "", "demo")
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, errOut)
	}
	for _, want := range []string{"Demo site at http://", "This run: decided 14 URLs = stored 8 (3 thin) + dropped 3 exact + 1 near + skipped 1 + errors 1; fetched 12 ", `"reason":"exact"`, `"reason":"near"`, "is removed as the demo ends"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	m := regexp.MustCompile(`Crawling into (\S+) \.\.\.`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("demo output names no data directory:\n%s", out)
	}
	if _, err := os.Stat(m[1]); !os.IsNotExist(err) {
		t.Errorf("temporary data directory %s still there (%v)", m[1], err)
	}

	dir := filepath.Join(t.TempDir(), "demo")
	out, errOut, err = run(t, "", "demo", "--data", dir)
	if err != nil {
		t.Fatalf("demo --data: %v\n%s", err, errOut)
	}
	if !strings.Contains(out, "Data kept in "+dir) {
		t.Errorf("demo --data output:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "dropped.jsonl")); err != nil {
		t.Errorf("demo --data: %v", err)
	}
}
