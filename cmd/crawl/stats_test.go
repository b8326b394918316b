package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/internal/demosite"
	"github.com/simcrawl/simcrawl/storage"
)

func TestStatsCommand(t *testing.T) {
	data, base, summary := crawlDemo(t)

	out, _, err := run(t, "", "stats", "--data", data, "--json")
	if err != nil {
		t.Fatalf("stats --json: %v", err)
	}
	var s statsJSON
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("stats --json output %q: %v", out, err)
	}

	// The figures must be the store's.
	d, err := crawler.OpenData(data, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pages, drops, err := d.Store.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var thin, exact, near int
	if err := d.Store.PageHeaders(ctx, func(p *storage.Page) error {
		if p.Thin {
			thin++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := d.Store.DropHeaders(ctx, func(dr *storage.Drop) error {
		if dr.Reason == storage.ReasonExact {
			exact++
		} else {
			near++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	fs, err := d.FrontierStats()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if pages != len(demosite.Stored) || drops != len(demosite.Dropped) {
		t.Fatalf("store holds %d pages and %d drops, want %d and %d", pages, drops, len(demosite.Stored), len(demosite.Dropped))
	}
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"stored", s.Stored, pages}, {"thin", s.Thin, thin},
		{"dropped_exact", s.DroppedExact, exact}, {"dropped_near", s.DroppedNear, near},
		{"failed", s.Failed, fs.Failed}, {"pending", s.Pending, 0},
		{"sum of near_drop_distances", sum(s.NearDropDistances), near},
		{"sum of near_drop_similarities", sum(s.NearDropSimilarities), near},
		{"near_drops_unverified", s.NearDropsUnverified, 0},
		{"nearest_neighbour_pages", s.NearestNeighbourPages, pages - thin},
		{"sum of nearest_neighbour_distances", sum(s.NearestNeighbourDistances), pages - thin},
	} {
		if c.got != c.want {
			t.Errorf("stats %s = %d, want %d", c.name, c.got, c.want)
		}
	}
	// The frontier's counts as the crawl itself reported them.
	if want := fmt.Sprintf("URLs failed: %d, still queued: 0", s.Failed); !strings.Contains(summary, want) {
		t.Errorf("stats says %d failed, %d pending; the crawl's summary says:\n%s", s.Failed, s.Pending, summary)
	}
	if s.Sampled || s.K != 7 || s.Features != "words,min=8,tok=2" || len(s.NearestNeighbourDistances) != 65 {
		t.Errorf("stats: sampled %v, k %d, features %q, %d histogram entries", s.Sampled, s.K, s.Features, len(s.NearestNeighbourDistances))
	}
	// On the demo site no two stored pages lie within k bits (the judge
	// may keep two that do, when their sketches tell them apart; the
	// demo has none such).
	for dist := 0; dist <= s.K; dist++ {
		if n := s.NearestNeighbourDistances[dist]; n != 0 {
			t.Errorf("%d stored pages have a neighbour %d bits away (k = %d)", n, dist, s.K)
		}
	}
	host := strings.TrimPrefix(base, "http://")
	if len(s.Hosts) != 1 || s.Hosts[0].Host != host || s.Hosts[0].Dropped != drops || s.Hosts[0].Stored != pages {
		t.Errorf("stats hosts = %+v, want %s with %d dropped, %d stored", s.Hosts, host, drops, pages)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"stored", "thin", "dropped_exact", "dropped_near", "failed", "skipped", "pending", "drop_rate",
		"k", "features", "layout", "hosts", "near_drop_distances", "near_drop_similarities", "near_drops_unverified", "nearest_neighbour_distances", "nearest_neighbour_pages", "sampled"} {
		if _, ok := raw[f]; !ok {
			t.Errorf("stats JSON lacks %q", f)
		}
	}

	text, _, err := run(t, "", "stats", "--data", data)
	if err != nil {
		t.Fatalf("stats: %v", err)
	}
	for _, want := range []string{
		"Stored   8 pages (3 thin",
		"; layout 4x16; k = 7",
		"Dropped  3 exact + 1 near = 4 (drop rate 33.3%)",
		host,
		"<- k",
		"(5 pages, every stored page)",
		"#",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("stats output lacks %q:\n%s", want, text)
		}
	}
}

// The URLs a crawl skipped are listed with their reasons by crawl failed
// --skipped and counted by stats.
func TestSkippedListedAndCounted(t *testing.T) {
	data := dedupDemoData(t)
	out, stderr, err := run(t, "", "failed", "--data", data, "--skipped")
	if err != nil {
		t.Fatalf("failed --skipped: %v", err)
	}
	if !strings.Contains(out, demosite.PathPrivate+"\trobots\n") {
		t.Errorf("failed --skipped lacks %s, disallowed by robots.txt:\n%s", demosite.PathPrivate, out)
	}
	n := strings.Count(out, "\n")
	if want := fmt.Sprintf("%d skipped URL", n); !strings.Contains(stderr, want) {
		t.Errorf("stderr %q lacks %q", stderr, want)
	}
	js, _, err := run(t, "", "stats", "--data", data, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var s statsJSON
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		t.Fatal(err)
	}
	if s.Skipped != n || n == 0 {
		t.Errorf("stats says %d skipped, failed --skipped lists %d", s.Skipped, n)
	}
}
