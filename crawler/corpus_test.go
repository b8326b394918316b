package crawler

import (
	"errors"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/extract"
)

const corpus = "../../shared/corpus"

// raceEnabled is set by race_test.go.
var raceEnabled bool

// skipQuality skips a TestQuality test, which measures the pipeline on the
// real pages of ../shared/corpus, when the corpus is absent, and under the
// race detector (about ten times slower, and checking nothing concurrent):
// CI runs them in a second pass without -race (README: "Tests").
func skipQuality(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(corpus); err != nil {
		t.Skip("no ../shared/corpus")
	}
	if raceEnabled {
		t.Skip("a quality test over the corpus: run without -race (go test -run '^TestQuality' ./...)")
	}
}

// Different articles on one site's template share navigation, footers and
// sidebars: the hardest negatives. After extraction their fingerprints must
// lie far beyond k = 3, or the crawler would drop real articles.
func TestQualitySameTemplateArticlesAreFarApart(t *testing.T) {
	skipQuality(t)
	groups := map[string][]string{
		"nytimes": globCases(t, "readability/nytimes-*/source.html"),
		"yahoo":   globCases(t, "readability/yahoo-*/source.html"),
		"wapo":    globCases(t, "readability/wapo-*/source.html"),
		"medium":  globCases(t, "readability/medium-*/source.html"),
		"163":     globCases(t, "gne-zh/163/*.html"),
		"sina":    globCases(t, "gne-zh/sina/*.html"),
	}
	fper, err := contentseen.NewFingerprinter(contentseen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const minDistance = 10 // "far above 3": measured minimum is logged below
	closest := 64
	for name, files := range groups {
		if len(files) < 2 {
			t.Errorf("%s: found %d pages, want several", name, len(files))
			continue
		}
		fps := map[string]contentseen.Fingerprint{}
		for _, f := range files {
			fp, ok := fingerprintFile(t, fper, f)
			if ok {
				fps[f] = fp
			}
		}
		for i, a := range files {
			for _, b := range files[i+1:] {
				fa, okA := fps[a]
				fb, okB := fps[b]
				if !okA || !okB {
					continue
				}
				d := contentseen.Distance(fa, fb)
				closest = min(closest, d)
				if d < minDistance {
					t.Errorf("%s: %s and %s are %d bits apart, want >= %d", name, rel(a), rel(b), d, minDistance)
				}
			}
		}
	}
	t.Logf("closest same-template pair: %d bits", closest)
}

func globCases(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(corpus, pattern))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func fingerprintFile(t *testing.T, fper *contentseen.Fingerprinter, path string) (contentseen.Fingerprint, bool) {
	t.Helper()
	fp, _, err := fper.Fingerprint(extractText(t, path))
	if errors.Is(err, contentseen.ErrNotEnoughContent) {
		t.Logf("%s: too little text to fingerprint", rel(path))
		return 0, false
	}
	if err != nil {
		t.Fatalf("fingerprint %s: %v", rel(path), err)
	}
	return fp, true
}

func rel(p string) string {
	r, err := filepath.Rel(corpus, p)
	if err != nil {
		return p
	}
	return r
}

// The near-duplicate edits of the issue, on real articles: a copy that
// drops three short phrases (Chinese news) or adds another title line and
// an advertising line (English articles) should mostly stay within k = 3.
// SimHash is a random projection, so this is a rate, not a certainty: the
// test asserts the median and the share within 3 and logs both.
func TestQualityEditedCopiesOfRealArticlesStayNear(t *testing.T) {
	skipQuality(t)
	fper, err := contentseen.NewFingerprinter(contentseen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var zh, en []int
	for _, f := range globCases(t, "gne-zh/*/*.html") {
		text := extractText(t, f)
		phrases := splitPhrases(text)
		fp0, _, err := fper.Fingerprint(text)
		if err != nil || len(phrases) < 10 {
			continue
		}
		for range 5 {
			fp1, _, err := fper.Fingerprint(dropShortPhrases(rng, phrases, 3))
			if err != nil {
				t.Fatal(err)
			}
			zh = append(zh, contentseen.Distance(fp0, fp1))
		}
	}
	for _, f := range globCases(t, "readability/*/source.html") {
		text := extractText(t, f)
		if len(strings.Fields(text)) < 300 || strings.ContainsFunc(text, func(r rune) bool { return r > 0x2e80 }) {
			continue
		}
		fp0, _, err := fper.Fingerprint(text)
		if err != nil {
			continue
		}
		edited := "Council approves new budget after long night of debate\n" + text +
			"\nAdvertisement: subscribe today and get three months of unlimited access for one dollar."
		fp1, _, err := fper.Fingerprint(edited)
		if err != nil {
			t.Fatal(err)
		}
		en = append(en, contentseen.Distance(fp0, fp1))
	}
	for _, c := range []struct {
		name string
		ds   []int
	}{{"zh: three short phrases dropped", zh}, {"en: new title line and an ad line", en}} {
		if len(c.ds) < 20 {
			t.Errorf("%s: only %d samples", c.name, len(c.ds))
			continue
		}
		slices.Sort(c.ds)
		within := 0
		for _, d := range c.ds {
			if d <= 3 {
				within++
			}
		}
		median, share := c.ds[len(c.ds)/2], float64(within)/float64(len(c.ds))
		t.Logf("%s: %d samples, median %d bits, p90 %d, %.0f%% within 3", c.name, len(c.ds), median, c.ds[len(c.ds)*9/10], 100*share)
		if median > 3 || share < 0.6 {
			t.Errorf("%s: median %d, %.0f%% within 3; want median <= 3 and >= 60%%", c.name, median, 100*share)
		}
	}
}

func extractText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := extract.ExtractBytes(b, "text/html", &url.URL{Scheme: "https", Host: "example.org", Path: "/" + rel(path)}, extract.Options{})
	if err != nil {
		t.Fatalf("extract %s: %v", rel(path), err)
	}
	return doc.Text
}

// splitPhrases cuts Chinese text after each clause or sentence mark.
func splitPhrases(text string) []string {
	var out []string
	start := 0
	for i, r := range text {
		if strings.ContainsRune("，。；！？、\n", r) {
			end := i + utf8.RuneLen(r)
			out = append(out, text[start:end])
			start = end
		}
	}
	return append(out, text[start:])
}

// dropShortPhrases joins phrases leaving out n random ones of 4 to 15
// characters.
func dropShortPhrases(rng *rand.Rand, phrases []string, n int) string {
	drop := map[int]bool{}
	for tries := 0; len(drop) < n && tries < 1000; tries++ {
		i := rng.IntN(len(phrases))
		if c := utf8.RuneCountInString(phrases[i]); c >= 4 && c <= 15 {
			drop[i] = true
		}
	}
	var b strings.Builder
	for i, p := range phrases {
		if !drop[i] {
			b.WriteString(p)
		}
	}
	return b.String()
}
