package crawler

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/internal/demosite"
	"github.com/simcrawl/simcrawl/storage"
)

// A short text (fewer than ShortFeatures features) takes the wider radius
// ShortK: its copy 8-11 bits away is dropped, verified by the sketch as
// any candidate; with no short radius, or a bound the text is not under,
// the copy is a candidate of nobody and kept.
func TestJudgeShortRadius(t *testing.T) {
	fper, err := contentseen.NewFingerprinter(contentseen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(17, 17))
	base := demosite.Words(r.Uint64(), 70)
	text := func(ws []string) string { return strings.Join(ws, " ") + "." }
	fb, nb, err := fper.Fingerprint(text(base))
	if err != nil {
		t.Fatal(err)
	}
	// A copy with two words edited whose fingerprint is 8-11 bits away.
	var copyText string
	dist := 0
	for range 5000 {
		v := append([]string(nil), base...)
		for _, w := range demosite.Words(r.Uint64(), 2) {
			v[r.IntN(len(v))] = w
		}
		f, _, err := fper.Fingerprint(text(v))
		if err != nil {
			t.Fatal(err)
		}
		if d := contentseen.Distance(fb, f); d >= 8 && d <= 11 {
			copyText, dist = text(v), d
			break
		}
	}
	if copyText == "" {
		t.Fatal("test setup: no two-word edit 8-11 bits away")
	}
	fetched := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	recs := []*Record{
		{URL: "http://short.example/a", Text: text(base), Title: "a", FetchedAt: fetched},
		{URL: "http://short.example/a-edited", Text: copyText, Title: "a", FetchedAt: fetched},
		{URL: "http://short.example/b", Text: text(demosite.Words(r.Uint64(), 70)), Title: "b", FetchedAt: fetched},
	}
	for _, tc := range []struct {
		name          string
		shortFeatures int
		dropped       bool
	}{
		{"short", 300, true},
		{"no short radius", 0, false},
		{"bound below the text's features", nb, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			c, err := Open(Options{DataDir: dir, K: 7, ShortK: 11, ShortFeatures: tc.shortFeatures})
			if err != nil {
				t.Fatal(err)
			}
			sum, err := c.Dedup(context.Background(), &sliceSource{recs: recs}, nil)
			if cerr := c.Close(); cerr != nil {
				t.Fatal(cerr)
			}
			if err != nil {
				t.Fatal(err)
			}
			var log []storage.DropRecord
			f, err := os.Open(filepath.Join(dir, "dropped.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := storage.ReadDropLog(f, func(rec storage.DropRecord) error {
				log = append(log, rec)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if !tc.dropped {
				if sum.Run.Stored != 3 || len(log) != 0 {
					t.Errorf("stored %d, drop log %+v; want all 3 stored (%d features, %d bits)", sum.Run.Stored, log, nb, dist)
				}
				return
			}
			if sum.Run.Stored != 2 || len(log) != 1 {
				t.Fatalf("stored %d, drop log %+v; want the edited copy (%d features, %d bits) dropped", sum.Run.Stored, log, nb, dist)
			}
			if l := log[0]; l.URL != recs[1].URL || l.DuplicateOf != recs[0].URL || l.Reason != "near" || l.Distance != dist {
				t.Errorf("drop %+v, want %s near %s at %d bits", l, recs[1].URL, recs[0].URL, dist)
			}
		})
	}
}

// A layout that answers less than the short radius gives short texts what
// it answers (an existing 10x28 or google16 data directory keeps working);
// long texts keep k.
func TestOpenShortRadiusBeyondLayout(t *testing.T) {
	for _, tc := range []struct {
		layout        string
		k, shortK     int
		shortFeatures int
		want          int
	}{
		{"4x16", 7, 11, 300, 11},
		{"10x28", 7, 11, 300, 9},
		{"google16", 3, 11, 300, 3},
		{"4x16", 7, 5, 300, 7},    // never narrower than k
		{"google16", 3, 11, 0, 3}, // no short texts
	} {
		c, err := Open(Options{DataDir: t.TempDir(), K: tc.k, ShortK: tc.shortK, ShortFeatures: tc.shortFeatures, Layout: tc.layout})
		if err != nil {
			t.Fatalf("Open(%+v): %v", tc, err)
		}
		short, long := &page{features: tc.shortFeatures - 1}, &page{features: tc.shortFeatures}
		if got := c.radius(short); tc.shortFeatures > 0 && got != tc.want {
			t.Errorf("%+v: short text's radius %d, want %d", tc, got, tc.want)
		}
		if got := c.radius(long); got != tc.k {
			t.Errorf("%+v: long text's radius %d, want k = %d", tc, got, tc.k)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
