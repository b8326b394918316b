package frontier

import (
	"bytes"
	"html"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// raceEnabled is set by race_test.go.
var raceEnabled bool

// absoluteLinks returns the quoted absolute http(s) href values of an HTML
// page. A byte scan, because regexp is too slow under -race.
func absoluteLinks(b []byte) []string {
	var out []string
	for {
		i := bytes.Index(b, []byte("href="))
		if i < 0 {
			return out
		}
		b = b[i+len("href="):]
		if len(b) == 0 || b[0] != '"' && b[0] != '\'' {
			continue
		}
		q := b[0]
		end := bytes.IndexByte(b[1:], q)
		if end < 0 {
			return out
		}
		v := string(b[1 : 1+end])
		if strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://") {
			out = append(out, v)
		}
		b = b[1+end:]
	}
}

// TestCanonicalCorpusLinks canonicalises every absolute link of the real
// pages in ../shared/corpus: no errors for real links, fixed points, and a
// count of how many links the canonical form merges.
func TestCanonicalCorpusLinks(t *testing.T) {
	root := filepath.Join("..", "..", "shared", "corpus")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("corpus not found at %s", root)
	}
	raw := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".html") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, l := range absoluteLinks(b) {
			raw[html.UnescapeString(l)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if raceEnabled {
		n := 0
		for r := range raw { // random order: a different sample each run
			if n++; n%10 != 0 {
				delete(raw, r)
			}
		}
	}
	canon := map[string]bool{}
	var bad []string
	nonASCII := 0
	for r := range raw {
		c, err := Canonical(r)
		if err != nil {
			bad = append(bad, err.Error())
			continue
		}
		if again, err := Canonical(c); err != nil || again != c {
			t.Errorf("Canonical(%q) = %q, not a fixed point (%q, %v)", r, c, again, err)
		}
		if err := validate(Item{URL: c}); err != nil {
			t.Errorf("Add would reject %q: %v", c, err)
		}
		if strings.ContainsFunc(r, func(c rune) bool { return c > 127 }) {
			nonASCII++
		}
		canon[c] = true
	}
	t.Logf("%d distinct absolute links (%d with non-ASCII characters) -> %d canonical URLs, %d rejected",
		len(raw), nonASCII, len(canon), len(bad))
	for _, b := range bad {
		t.Logf("rejected: %s", b)
	}
	// Real pages do carry a few broken links; more than 1 % would mean
	// Canonical rejects real URLs.
	if len(bad)*100 > len(raw) {
		t.Errorf("%d of %d real links rejected", len(bad), len(raw))
	}
}
