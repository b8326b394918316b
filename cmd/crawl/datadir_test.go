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
