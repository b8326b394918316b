package main

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/crawler"
)

// TestSeveralDataDirsErrors: a directory given twice is a usage error; a
// missing, damaged or busy one fails the command as it does alone, named;
// a worker's directory read without the others lists the drops whose page
// it lacks, and says so.
func TestSeveralDataDirsErrors(t *testing.T) {
	_, workers := splitCrawl(t)
	a, b := workers[0], workers[1]
	damaged := filepath.Join(t.TempDir(), "damaged")
	copyDir(t, b, damaged)
	fi, err := os.Stat(filepath.Join(damaged, crawler.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(damaged, crawler.DBFile), fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	busy := filepath.Join(t.TempDir(), "busy")
	copyDir(t, b, busy)
	// A crawl holds its directory's crawl.db open for writing, which is
	// what locks it.
	held, err := bolt.Open(filepath.Join(busy, crawler.DBFile), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // after the parallel subtests below
		if err := held.Close(); err != nil {
			t.Error(err)
		}
	})
	missing := filepath.Join(t.TempDir(), "missing")

	// serve is given an address it cannot listen on (a well-formed one,
	// held by the test): it must fail on its directories before it
	// listens (else it would fail there, or serve).
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := taken.Close(); err != nil {
			t.Error(err)
		}
	})
	for _, cmd := range [][]string{{"export"}, {"dups"}, {"dups", "show", "http://mirror.example/article-1"}, {"stats"}, {"failed"},
		{"serve", "--addr", taken.Addr().String()}} {
		for _, tc := range []struct {
			name  string
			dirs  []string
			usage bool
			want  string // in the error
		}{
			{"twice", []string{a, b, a + "/"}, true, "--data " + a + "/ names the directory of --data " + a + " again"},
			{"missing", []string{a, missing}, false, "no data directory " + missing},
			{"damaged", []string{a, damaged}, false, damaged + "/crawl.db is damaged"},
			{"busy", []string{busy, a}, false, "in use by another crawl: " + busy},
		} {
			t.Run(strings.Join(cmd, " ")+"/"+tc.name, func(t *testing.T) {
				t.Parallel() // each busy case waits out the lock timeout
				_, _, err := run(t, "", append(slices.Clone(cmd), dataFlags(tc.dirs...)...)...)
				var ue *usageError
				if err == nil || !strings.Contains(err.Error(), tc.want) || errors.As(err, &ue) != tc.usage {
					t.Errorf("err = %v, want one saying %q (a usage error: %v)", err, tc.want, tc.usage)
				}
			})
		}
	}

	t.Run("one worker alone", func(t *testing.T) {
		out, errOut := mustRun(t, "dups", "--data", b)
		for _, s := range []string{"http://news.example/article-0  (stored in none of the data directories read, 1 drop)",
			"http://blog.example/article-1  (stored in none of the data directories read, 1 drop)"} {
			if !strings.Contains(out, s) {
				t.Errorf("dups of worker-b alone lacks %q:\n%s", s, out)
			}
		}
		if want := "2 drops of pages stored in none of the data directories read (" + b + ")"; !strings.Contains(errOut, want) {
			t.Errorf("dups of worker-b alone said %q, want %q", errOut, want)
		}
		_, _, err := run(t, "", "dups", "show", "--data", b, "http://mirror.example/article-1")
		if err == nil || !strings.Contains(err.Error(), "duplicates http://blog.example/article-1, which none of the data directories read stores") || strings.Contains(err.Error(), "crawl check") {
			t.Errorf("dups show of a drop of the other worker's page: err = %v", err)
		}
	})
}

// TestStatsNotesDirectoriesThatDisagree: directories crawled with another
// k are not one crawl's, and stats says so.
func TestStatsNotesDirectoriesThatDisagree(t *testing.T) {
	recs := splitCorpus()
	a := dedupInto(t, "a", recs[:3])
	b := dedupInto(t, "b", recs[3:6], "--set", "contentseen.k=5")
	out, _ := mustRun(t, "stats", "--data", a, "--data", b)
	want := "  note: " + b + " was last crawled with k = 5, " + a + " with k = 7: the figures below mix them\n"
	if !strings.Contains(out, want) || !strings.Contains(out, "(from the last crawl or dedup run of "+a+")") {
		t.Errorf("stats of directories crawled with k 7 and 5:\n%s\nwant the note %q and where k came from", out, want)
	}
}

// TestWorkerDirWithDropsOfOtherWorkersPages: a drop of a page another
// worker stored is sound data, not damage: check passes, a rerun that
// finds its drop-log line missing writes it again, and repair keeps it.
func TestWorkerDirWithDropsOfOtherWorkersPages(t *testing.T) {
	whole, workers := splitCrawl(t)
	a, b := workers[0], workers[1]
	if out, errOut, err := run(t, "", "check", "--data", b); err != nil {
		t.Fatalf("check of worker-b: %v\n%s%s", err, out, errOut)
	}

	logPath := filepath.Join(b, "dropped.jsonl")
	full, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(full), "\n"), "\n")
	last := lines[len(lines)-1] // addForeignDrop wrote it
	if !strings.Contains(last, `"duplicate_of":"http://news.example/article-0"`) {
		t.Fatalf("the last line of worker-b's drop log is %s, want the drop of worker-a's article-0", last)
	}
	if err := os.WriteFile(logPath, full[:len(full)-len(last)-1], 0o644); err != nil {
		t.Fatal(err)
	}
	rerun := writeRecords(t, t.TempDir(), "rerun.jsonl", nil)
	mustRun(t, "dedup", "--data", b, "--input", rerun, "--set", "log.level=warn")
	if got, err := os.ReadFile(logPath); err != nil || string(got) != string(full) {
		t.Errorf("the drop log after the rerun:\n%s\nwant it whole again:\n%s (%v)", got, full, err)
	}

	repaired := filepath.Join(t.TempDir(), "repaired")
	mustRun(t, "repair", "--data", b, "--out", repaired)
	wantOut, _ := mustRun(t, "dups", "--json", "--data", whole)
	out, _ := mustRun(t, "dups", "--json", "--data", a, "--data", repaired)
	if got, want := groupURLs(decodeGroups(t, out)), groupURLs(decodeGroups(t, wantOut)); !equalGroups(got, want) {
		t.Errorf("dups of worker-a and worker-b repaired:\n%v\nwant the whole crawl's:\n%v", got, want)
	}
}
