package extract

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// FuzzExtract checks that no input panics (Extract would turn a panic into
// ErrInternal, which the fuzzer reports as a failure) and that what comes
// back is well-formed. Seeds: the golden fixtures plus a few hostile
// shapes.
func FuzzExtract(f *testing.F) {
	seeds, err := filepath.Glob("testdata/*/source.html")
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, "text/html")
	}
	f.Add([]byte("<html><body><div><div><p>x"), "")
	f.Add([]byte("<meta charset=gbk><p>\xb8\xdb\xba\xa3"), "text/html; charset=gbk")
	f.Add([]byte("\xff\xfe<\x00p\x00>\x00"), "text/html")
	f.Add([]byte("<base href='//x'><a href='%zz'>bad</a><a href='http://[::1'>v6</a>"), "text/html")
	f.Add([]byte("<svg><math><table><select><template><p>"), "application/xhtml+xml")
	u, _ := url.Parse("https://example.com/dir/page")
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		d, err := ExtractBytes(body, contentType, u, Options{MaxBodySize: 1 << 20})
		if errors.Is(err, ErrInternal) {
			t.Fatal(err)
		}
		if err != nil {
			return
		}
		if !utf8.ValidString(d.Text) || !utf8.ValidString(d.Title) {
			t.Errorf("invalid UTF-8 in Text %q or Title %q", d.Text, d.Title)
		}
		for _, l := range d.Links {
			v, err := url.Parse(l.URL)
			if err != nil || v.Scheme != "http" && v.Scheme != "https" || v.Fragment != "" {
				t.Errorf("bad link %q", l.URL)
			}
		}
	})
}
