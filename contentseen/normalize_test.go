package contentseen

import (
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Every rune the fast path accepts must map to its NFKC form and be a
// starter that combines with nothing on its left (BoundaryBefore). A text
// made only of such runes splits into one-rune segments, so mapping rune
// by rune equals normalising the whole text.
func TestFastNFKC(t *testing.T) {
	for r := rune(0x80); r <= utf8.MaxRune; r++ {
		m, ok := fastRune(r)
		if !ok {
			continue
		}
		s := string(r)
		if want := norm.NFKC.String(s); string(m) != want {
			t.Errorf("fastRune(%U) = %q, NFKC gives %q", r, string(m), want)
		}
		p := norm.NFKC.PropertiesString(s)
		if p.CCC() != 0 || !p.BoundaryBefore() {
			t.Errorf("fastRune accepts %U, which can combine with the rune before it", r)
		}
	}
	for _, s := range []string{"北京，上海。", "ＡＢＣ　１２３", "「你好」《书》·—“”", "abc\u4e00"} {
		got, ok := fastNFKC(s, nil)
		if !ok || string(got) != norm.NFKC.String(s) {
			t.Errorf("fastNFKC(%q) = %q, %v; want %q, true", s, got, ok, norm.NFKC.String(s))
		}
	}
	for _, s := range []string{"café", "e\u0301", "…", "\xff", "ｶ"} {
		if _, ok := fastNFKC(s, nil); ok {
			t.Errorf("fastNFKC(%q) took the fast path", s)
		}
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"", "abc", "北京，上海。", "ＡＢＣ　１２３", "e\u0301", "…", "\xffx", "ｶﾞ", "Å"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, _ := normalize(s, nil)
		if want := norm.NFKC.String(s); got != want {
			t.Errorf("normalize(%q) = %q, want %q", s, got, want)
		}
	})
}
