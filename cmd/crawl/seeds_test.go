package main

import (
	"slices"
	"strings"
	"testing"
)

// What editors and people write in a seeds file: a byte order mark, CRLF,
// comments after a URL; and what is refused with the line named: a URL
// followed by a word (it was fetched as URL%20word), no scheme.
func TestParseSeeds(t *testing.T) {
	good := "\ufeffhttp://a.example/\r\n  https://b.example/x  # the b site\r\n\r\n# a comment\nhttp://c.example/\n"
	seeds, err := parseSeeds("s.txt", strings.NewReader(good))
	if want := []string{"http://a.example/", "https://b.example/x", "http://c.example/"}; err != nil || !slices.Equal(seeds, want) {
		t.Errorf("parseSeeds = %q, %v; want %q", seeds, err, want)
	}
	for _, tc := range []struct{ text, want string }{
		{"http://a.example/ label\n", `s.txt:1: bad URL "http://a.example/ label": it contains a space`},
		{"http://a.example/\n\ufeffhttp://b.example/\n", `s.txt:2: bad URL`},
		{"http://a.example/\texample\n", `s.txt:1: bad URL "http://a.example/\texample": it contains a space`},
		{"a.example\n", `s.txt:1: bad URL "a.example": want an absolute http:// or https:// URL`},
	} {
		if _, err := parseSeeds("s.txt", strings.NewReader(tc.text)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseSeeds(%q) = %v, want %q", tc.text, err, tc.want)
		}
	}
}
