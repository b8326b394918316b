package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A reading command pointed at a directory that does not exist, or at a
// file, says so; it is a typo, not a damaged crawl (check and the others
// called it DAMAGED and suggested crawl repair).
func TestReadingCommandsOnNoDataDirectory(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "afile")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(tmp, "nonexist")
	for _, cmd := range []string{"check", "stats", "dups", "failed", "export", "serve"} {
		for dir, want := range map[string]string{missing: "no data directory", file: "is a file"} {
			_, _, err := run(t, "", cmd, "--data", dir)
			if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "damaged") {
				t.Errorf("crawl %s --data %s: err = %v, want one saying %q, not damage", cmd, dir, err, want)
			}
		}
		if _, err := os.Stat(missing); err == nil {
			t.Fatalf("crawl %s created %s", cmd, missing)
		}
	}
}

// An empty directory (also what a failed repair leaves) holds no crawl:
// check says so, as stats and the other reading commands do, and does not
// call it damaged or send the user to repair.
func TestReadingCommandsOnEmptyDataDirectory(t *testing.T) {
	empty := t.TempDir()
	for _, cmd := range []string{"check", "stats", "dups", "failed", "export", "serve"} {
		out, _, err := run(t, "", cmd, "--data", empty)
		if err == nil || !strings.Contains(err.Error(), "no crawl data in "+empty) ||
			strings.Contains(err.Error(), "damaged") || strings.Contains(err.Error(), "repair") || strings.Contains(out, "DAMAGED") {
			t.Errorf("crawl %s --data %s: err = %v, stdout %q; want one saying no crawl data, not damage", cmd, empty, err, out)
		}
	}
}
