package copyweb

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

var raceEnabled bool

const corpusDir = "../../../shared/corpus"

// The thresholds: a crawl with the default options must drop
// copies with recall >= 0.95 and keep distinct pages with precision >= 0.99.
const (
	minPrecision = 0.99
	minRecall    = 0.95
)

func TestQualityCopies(t *testing.T) {
	checkQuality(t, Bounded)
}

// TestQualityCopiesBig crawls every usable corpus page and 60 copies of
// each kind; it runs only with SIMCRAWL_BIG=1 (minutes) and prints the
// table and every wrong decision.
func TestQualityCopiesBig(t *testing.T) {
	if os.Getenv("SIMCRAWL_BIG") == "" {
		t.Skip("set SIMCRAWL_BIG=1 to crawl the big web of copies")
	}
	checkQuality(t, Big)
}

func checkQuality(t *testing.T, cfg Config) {
	if raceEnabled {
		t.Skip("crawling the corpus web is too slow under -race; CI runs it without")
	}
	if _, err := os.Stat(corpusDir); err != nil {
		t.Skip("no ../shared/corpus")
	}
	start := time.Now()
	_, rep, err := Evaluate(context.Background(), corpusDir, t.TempDir(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var table, misses strings.Builder
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteMisses(&misses); err != nil {
		t.Fatal(err)
	}
	t.Logf("web of copies, seed %d, crawled in %v:\n%s\n%s", cfg.Seed, time.Since(start).Round(time.Millisecond), table.String(), misses.String())
	if rep.Total.Missing > 0 {
		t.Errorf("%d pages neither stored nor dropped: the web or the crawl is broken", rep.Total.Missing)
	}
	if p, r := rep.Total.Precision(), rep.Total.Recall(); p < minPrecision || r < minRecall {
		t.Errorf("precision %.3f, recall %.3f; want >= %.2f and >= %.2f (per kind above; go run ./internal/copyweb/cmd/copyweb-eval -misses prints the same without failing)", p, r, minPrecision, minRecall)
	}
}
