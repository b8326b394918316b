package copyweb

import (
	"context"
	"testing"
)

// A crawl of a small web of our own articles reaches every page, and the
// score reads the store and the drop log: an exact mirror is always
// dropped (its text digest is its original's). The quality of the other
// decisions is TestQualityCopies' business.
func TestCrawlReachesEveryPageAndScoresMirrors(t *testing.T) {
	w, err := Generate(fixtureSources(3), Config{Seed: 3, PerKind: 1, ShortPages: 1})
	if err != nil {
		t.Fatal(err)
	}
	out, err := Crawl(context.Background(), w, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	rep := Score(w, out)
	if rep.Total.Missing != 0 {
		for _, p := range w.Pages {
			if out[p.ID] == nil {
				t.Errorf("page %s (%s) neither stored nor dropped", p.ID, p.Kind)
			}
		}
	}
	for _, r := range rep.Rows {
		if r.Kind == Mirror && (r.Pages == 0 || r.TP != r.Pages) {
			t.Errorf("mirrors: %d pages, %d caught", r.Pages, r.TP)
		}
	}
	if len(out) != len(w.Pages) {
		t.Errorf("%d outcomes for %d pages: the crawl stored or dropped pages that are not the web's", len(out), len(w.Pages))
	}
}
