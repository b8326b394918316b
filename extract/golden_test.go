package extract

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html/charset"
)

var update = flag.Bool("update", false, "rewrite testdata/*/want.txt from the current output")

// goldenPageURL is the URL every golden case is extracted as.
const goldenPageURL = "https://news.example.com/2026/03/story.html"

// render prints a Document the way want.txt files hold it: the fields a
// reviewer cares about, the links, then the text.
func render(d *Document) string {
	var b strings.Builder
	fmt.Fprintf(&b, "url: %s\ncanonical: %s\ntitle: %s\nlang: %s\ncharset: %s\n", d.URL, d.CanonicalURL, d.Title, d.Lang, d.Charset)
	fmt.Fprintf(&b, "noindex: %v\nnofollow: %v\nfallback: %v\ntruncated: %v\nlinks: %d\n", d.NoIndex, d.NoFollow, d.Fallback, d.Truncated, len(d.Links))
	for _, l := range d.Links {
		fmt.Fprintf(&b, "  %s %q nofollow=%v\n", l.URL, l.Text, l.NoFollow)
	}
	fmt.Fprintf(&b, "--- text\n%s\n", d.Text)
	return b.String()
}

// goldenSource reads testdata/<case>/source.html. The files are UTF-8 so
// that reviewers can read them; a case with an "encoding" file is encoded
// with that charset first, as a server in that charset would send it.
func goldenSource(t *testing.T, dir string) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(dir, "source.html"))
	if err != nil {
		t.Fatal(err)
	}
	label, err := os.ReadFile(filepath.Join(dir, "encoding"))
	if os.IsNotExist(err) {
		return src
	}
	if err != nil {
		t.Fatal(err)
	}
	enc, name := charset.Lookup(strings.TrimSpace(string(label)))
	if enc == nil {
		t.Fatalf("%s: unknown encoding %q", dir, label)
	}
	out, err := enc.NewEncoder().Bytes(src)
	if err != nil {
		t.Fatalf("%s: encode as %s: %v", dir, name, err)
	}
	return out
}

func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*/source.html")
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(goldenPageURL)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range dirs {
		dir := filepath.Dir(p)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			d, err := ExtractBytes(goldenSource(t, dir), "text/html", u, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := render(d)
			wantPath := filepath.Join(dir, "want.txt")
			if *update {
				if err := os.WriteFile(wantPath, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(wantPath)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("output differs from %s (go test -update, then review the diff)\ngot:\n%s\nwant:\n%s", wantPath, got, want)
			}
		})
	}
}
