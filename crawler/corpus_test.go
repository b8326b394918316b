package crawler

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/extract"
)

const corpus = "../../shared/corpus"

// Different articles on one site's template share navigation, footers and
// sidebars: the hardest negatives. After extraction their fingerprints must
// lie far beyond k = 3, or the crawler would drop real articles.
func TestSameTemplateArticlesAreFarApart(t *testing.T) {
	if _, err := os.Stat(corpus); err != nil {
		t.Skip("no ../shared/corpus")
	}
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
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := extract.ExtractBytes(b, "text/html", &url.URL{Scheme: "https", Host: "example.org", Path: "/" + rel(path)}, extract.Options{})
	if err != nil {
		t.Fatalf("extract %s: %v", rel(path), err)
	}
	fp, _, err := fper.Fingerprint(doc.Text)
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
