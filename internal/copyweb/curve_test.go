package copyweb

import (
	"testing"

	"github.com/simcrawl/simcrawl/contentseen"
)

func TestShortPairsAndRadiusCurve(t *testing.T) {
	pairs := ShortPairs(fixtureSources(6), 1, 2)
	kinds := map[Kind]int{}
	for _, p := range pairs {
		kinds[p.Kind]++
		if p.Copy != p.Kind.Positive() {
			t.Errorf("%s pair: copy %v", p.Kind, p.Copy)
		}
		if p.A == p.B {
			t.Errorf("%s pair: both sides the same text", p.Kind)
		}
	}
	for _, k := range []Kind{Ads, Counters, Comments, EditWords, Repost, SameTemplate, Rewrite} {
		if kinds[k] == 0 {
			t.Errorf("no %s pair among %d", k, len(pairs))
		}
	}
	f, err := contentseen.NewFingerprinter(contentseen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ks := []int{0, 7, 64}
	rows, err := RadiusCurve(pairs, f, contentseen.DefaultThresholds(), nil, ks)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(ks) {
		t.Fatalf("%d rows, want one per radius", len(rows))
	}
	for i, r := range rows {
		if r.Copies+r.Keeps == 0 || r.Copies+r.Keeps != rows[0].Copies+rows[0].Keeps {
			t.Errorf("k=%d: %d copies and %d keeps, want every judged pair at every radius", r.K, r.Copies, r.Keeps)
		}
		if i > 0 && r.Caught < rows[i-1].Caught {
			t.Errorf("caught %d at k=%d, fewer than %d at k=%d", r.Caught, r.K, rows[i-1].Caught, rows[i-1].K)
		}
	}
	// At 64 bits every pair is a candidate: the sketch alone decides.
	if last := rows[len(rows)-1]; last.Within != last.Keeps || last.Caught == 0 {
		t.Errorf("k=64: %+v, want every pair to keep within the radius and copies caught", last)
	}
}
