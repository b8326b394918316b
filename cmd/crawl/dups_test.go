package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/simcrawl/simcrawl/internal/demosite"
)

// crawlDemo crawls the demo site into a new data directory and returns it,
// the site's base URL and the crawl's summary.
func crawlDemo(t *testing.T) (data, base, summary string) {
	t.Helper()
	srv := httptest.NewServer(demosite.New())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	seeds := writeFile(t, dir, "seeds.txt", srv.URL+"/\n")
	data = filepath.Join(dir, "data")
	summary, _, err := run(t, "", "--seeds", seeds, "--data", data,
		"--set", "fetch.delay=0s", "--set", "fetch.parallelism=1", "--set", "log.level=warn",
		"--set", "fetch.retry_backoff=1ms")
	if err != nil {
		t.Fatalf("crawl: %v", err)
	}
	return data, srv.URL, summary
}

func decodeGroups(t *testing.T, out string) []dupGroupJSON {
	t.Helper()
	var gs []dupGroupJSON
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var g dupGroupJSON
		if err := json.Unmarshal([]byte(line), &g); err != nil {
			t.Fatalf("dups --json line %q: %v", line, err)
		}
		gs = append(gs, g)
	}
	return gs
}

func TestDupsCommand(t *testing.T) {
	data, base, _ := crawlDemo(t)

	t.Run("groups", func(t *testing.T) {
		out, _, err := run(t, "", "dups", "--data", data, "--json")
		if err != nil {
			t.Fatalf("dups --json: %v", err)
		}
		gs := decodeGroups(t, out)
		got := map[string]string{} // dropped path -> original path
		for i, g := range gs {
			if i > 0 && len(g.Drops) > len(gs[i-1].Drops) {
				t.Errorf("group %d (%d drops) follows a smaller group (%d drops)", i, len(g.Drops), len(gs[i-1].Drops))
			}
			if g.ID == 0 || g.Title == "" || len(g.Fingerprint) != 16 {
				t.Errorf("group %+v lacks id, title or fingerprint", g)
			}
			for _, d := range g.Drops {
				got[strings.TrimPrefix(d.URL, base)] = strings.TrimPrefix(g.URL, base)
				if d.Reason != "exact" && d.Reason != "near" || len(d.Fingerprint) != 16 || d.FetchedAt.IsZero() || d.Title == "" {
					t.Errorf("drop %+v: bad reason, fingerprint, fetched_at or title", d)
				}
			}
		}
		if len(got) != len(demosite.Dropped) {
			t.Errorf("dups lists %d drops, want %d: %v", len(got), len(demosite.Dropped), got)
		}
		for drop, orig := range demosite.Dropped {
			if got[drop] != orig {
				t.Errorf("%s grouped under %q, want %s", drop, got[drop], orig)
			}
		}
		if first := strings.TrimPrefix(gs[0].URL, base); first != "/news/river-cleanup" {
			t.Errorf("largest group is %s, want /news/river-cleanup (two drops)", first)
		}
		// The JSON field names are a contract.
		var raw map[string]any
		if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &raw); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"id", "url", "title", "fingerprint", "drops"} {
			if _, ok := raw[f]; !ok {
				t.Errorf("group JSON lacks %q", f)
			}
		}
		drop := raw["drops"].([]any)[0].(map[string]any)
		for _, f := range []string{"url", "distance", "reason", "fingerprint", "title", "fetched_at", "depth", "similarity", "containment"} {
			if _, ok := drop[f]; !ok {
				t.Errorf("drop JSON lacks %q", f)
			}
		}
	})

	t.Run("text", func(t *testing.T) {
		out, _, err := run(t, "", "dups", "--data", data)
		if err != nil {
			t.Fatalf("dups: %v", err)
		}
		for drop, orig := range demosite.Dropped {
			if !strings.Contains(out, base+drop) || !strings.Contains(out, base+orig) {
				t.Errorf("dups output lacks %s or %s:\n%s", drop, orig, out)
			}
		}
		if !strings.Contains(out, "4 dropped pages in 3 groups") {
			t.Errorf("dups output lacks the total:\n%s", out)
		}
		if hint := "crawl dups show --data " + shellQuote(data) + " URL"; !strings.Contains(out, hint) {
			t.Errorf("dups output lacks the hint %q:\n%s", hint, out)
		}
	})

	filters := []struct {
		name  string
		args  []string
		drops []string
	}{
		{"exact", []string{"--reason", "exact"}, []string{"/mirror/river-cleanup", "/syndicated/river-cleanup", "/syndicated/market-prices"}},
		{"near", []string{"--reason", "near"}, []string{"/reposts/tea-garden"}},
		{"min-distance", []string{"--min-distance", "1"}, []string{"/reposts/tea-garden"}},
		{"max-distance", []string{"--max-distance", "0"}, []string{"/mirror/river-cleanup", "/syndicated/river-cleanup", "/syndicated/market-prices"}},
		{"host", []string{"--host", strings.TrimPrefix(base, "http://")}, []string{"/mirror/river-cleanup", "/syndicated/river-cleanup", "/syndicated/market-prices", "/reposts/tea-garden"}},
		{"host without port", []string{"--host", "127.0.0.1"}, []string{"/mirror/river-cleanup", "/syndicated/river-cleanup", "/syndicated/market-prices", "/reposts/tea-garden"}},
		{"other host", []string{"--host", "example.org"}, nil},
		{"combined", []string{"--reason", "exact", "--host", "127.0.0.1", "--min-distance", "1"}, nil},
	}
	for _, tc := range filters {
		t.Run("filter "+tc.name, func(t *testing.T) {
			out, _, err := run(t, "", append([]string{"dups", "--data", data, "--json"}, tc.args...)...)
			if err != nil {
				t.Fatalf("dups %v: %v", tc.args, err)
			}
			var got []string
			for _, g := range decodeGroups(t, out) {
				for _, d := range g.Drops {
					got = append(got, strings.TrimPrefix(d.URL, base))
				}
			}
			if strings.Join(sorted(got), " ") != strings.Join(sorted(tc.drops), " ") {
				t.Errorf("dups %v = %v, want %v", tc.args, got, tc.drops)
			}
		})
	}

	t.Run("bad flags", func(t *testing.T) {
		for _, args := range [][]string{{"--reason", "fuzzy"}, {"--min-distance", "-1"}, {"extra"}} {
			if _, _, err := run(t, "", append([]string{"dups", "--data", data}, args...)...); err == nil {
				t.Errorf("dups %v succeeded", args)
			}
		}
	})

	t.Run("show syndicated copy", func(t *testing.T) {
		out, _, err := run(t, "", "dups", "show", "--data", data, base+"/syndicated/river-cleanup")
		if err != nil {
			t.Fatalf("dups show: %v", err)
		}
		for _, want := range []string{
			"Duplicate of: " + base + "/news/river-cleanup",
			"Distance:     0 bits (exact",
			"Similarity:   1.000 (Jaccard of word 3-shingles), containment 1.000 (as judged)",
			"Text: identical in both",
			"[-Volunteers pull two-]{+Two+}", // the titles differ; markers, not colour, off a terminal
			"features words,min=8,tok=2",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("dups show lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "\x1b[") {
			t.Errorf("dups show wrote colour codes to a non-terminal:\n%s", out)
		}
	})

	t.Run("show near copy", func(t *testing.T) {
		// Flags may follow the URL too.
		out, _, err := run(t, "", "dups", "show", base+"/reposts/tea-garden", "--data", data)
		if err != nil {
			t.Fatalf("dups show: %v", err)
		}
		for _, want := range []string{
			"Duplicate of: " + base + "/zh/tea-garden",
			"Distance:     1 bit (near",
			"Similarity:   0.", "containment 0.9", // verified by containment
			"[-，常年云雾缭绕-]", // the repost cut one clause
			`Heaviest features only in the stored page:  "云雾" 1.00`,
		} {
			if !strings.Contains(out, want) {
				t.Errorf("dups show lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("show not a drop", func(t *testing.T) {
		// Answers, not damage: no hint to check the directory.
		_, _, err := run(t, "", "dups", "show", "--data", data, base+"/news/river-cleanup")
		if err == nil || !strings.Contains(err.Error(), "is a stored page") || strings.Contains(err.Error(), "crawl check") {
			t.Errorf("dups show of a stored page: err = %v, want it to say the page is stored, and no damage hint", err)
		}
		_, _, err = run(t, "", "dups", "show", "--data", data, base+"/nowhere")
		if err == nil || !strings.Contains(err.Error(), "was not dropped") || strings.Contains(err.Error(), "crawl check") {
			t.Errorf("dups show of an unknown URL: err = %v, want it to say so, and no damage hint", err)
		}
		if _, _, err := run(t, "", "dups", "show", "--data", data); err == nil {
			t.Error("dups show without a URL succeeded")
		}
	})
}

func TestDupsHelpDocumentsFlags(t *testing.T) {
	for cmd, flags := range map[string][]string{
		"dups":  {"-data", "-host", "-reason", "-min-distance", "-max-distance", "-json", "dups show"},
		"stats": {"-data", "-json", "valley", "sampled"},
	} {
		out, _, err := run(t, "", "help", cmd)
		if err != nil {
			t.Fatalf("help %s: %v", cmd, err)
		}
		for _, f := range flags {
			if !strings.Contains(out, f) {
				t.Errorf("help %s lacks %q:\n%s", cmd, f, out)
			}
		}
	}
}

func TestInspectWithoutData(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"dups"}, {"dups", "show", "http://x/"}, {"stats"}} {
		_, _, err := run(t, "", append(args, "--data", empty)...)
		if err == nil || !strings.Contains(err.Error(), "no crawl data") {
			t.Errorf("%v on an empty directory: err = %v, want 'no crawl data'", args, err)
		}
		_, _, err = run(t, "", append(args, "--data", filepath.Join(dir, "none"))...)
		if err == nil || !strings.Contains(err.Error(), "no data directory") {
			t.Errorf("%v on a directory that does not exist: err = %v, want 'no data directory'", args, err)
		}
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// TestDupsShowWithoutDropText: a crawl that did not keep the texts of
// dropped pages still explains the drop, says why there is no diff, and
// names the crawl's feature scheme rather than the configuration's.
func TestDupsShowWithoutDropText(t *testing.T) {
	srv := httptest.NewServer(demosite.New())
	defer srv.Close()
	dir := t.TempDir()
	seeds := writeFile(t, dir, "seeds.txt", srv.URL+"/\n")
	data := filepath.Join(dir, "data")
	if _, _, err := run(t, "", "--seeds", seeds, "--data", data, "--set", "fetch.delay=0s",
		"--set", "log.level=warn", "--set", "fetch.retry_backoff=1ms", "--set", "store.keep_drop_text=false",
		"--set", "contentseen.min_features=6"); err != nil {
		t.Fatalf("crawl: %v", err)
	}
	out, _, err := run(t, "", "dups", "show", "--data", data, srv.URL+"/reposts/tea-garden")
	if err != nil {
		t.Fatalf("dups show: %v", err)
	}
	// Features are weighed as the crawl's index recorded (min=6), not as
	// today's configuration says (the default, min=8).
	for _, want := range []string{"Duplicate of: " + srv.URL + "/zh/tea-garden", "Distance:     1 bit", "text was not kept", "features words,min=6,tok=2"} {
		if !strings.Contains(out, want) {
			t.Errorf("dups show lacks %q:\n%s", want, out)
		}
	}
}
