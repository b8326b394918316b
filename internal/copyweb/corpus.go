package copyweb

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A Source is one real page read from the corpus: the material copies are
// made of. Its bytes are never written anywhere but the test server.
type Source struct {
	ID   string // corpus-relative path, e.g. "readability/nytimes-1/source.html"
	HTML []byte // as stored (UTF-8)
	// Template names the group of corpus pages that share one site's
	// template ("nytimes", "gne-zh/163"); "" when the page has none listed.
	Template string
}

// templateGroups are the corpus's different articles on one template (see
// the corpus README): the hardest negatives.
var templateGroups = map[string]string{
	"readability/nytimes-": "nytimes",
	"readability/wapo-":    "wapo",
	"readability/yahoo-":   "yahoo",
	"readability/medium-":  "medium",
	"gne-zh/163/":          "gne-zh/163",
	"gne-zh/sina/":         "gne-zh/sina",
	"gne-zh/thepaper/":     "gne-zh/thepaper",
}

// LoadCorpus reads the readability, gne-zh and trafilatura pages under dir
// (../shared/corpus from the repository root), sorted by ID so that a seed
// gives the same web on every machine. It fails when dir holds none.
func LoadCorpus(dir string) ([]Source, error) {
	var paths []string
	for _, pat := range []string{"readability/*/source.html", "gne-zh/*/*.html", "trafilatura/pages/*.html"} {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return nil, fmt.Errorf("copyweb: %w", err)
		}
		paths = append(paths, m...)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("copyweb: no corpus pages under %s", dir)
	}
	var out []Source
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("copyweb: %w", err)
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return nil, fmt.Errorf("copyweb: %w", err)
		}
		rel = filepath.ToSlash(rel)
		s := Source{ID: rel, HTML: b}
		for prefix, g := range templateGroups {
			if strings.HasPrefix(rel, prefix) {
				s.Template = g
			}
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Source) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}
