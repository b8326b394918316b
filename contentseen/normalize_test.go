package contentseen

import (
	"os"
	"path/filepath"
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

// TestNormalizeMixed checks normalize, which sends only the spans of
// runes fastRune does not know through norm, against norm on whole texts
// that mix both kinds, marks that combine with a fast rune before them
// included, and on the corpus when it is there.
func TestNormalizeMixed(t *testing.T) {
	texts := []string{"北京e\u0301上海", "ｶﾞ北京", "北\u0301京", "a\u0308\u0301b", "…北京…", "x\xff北\xffy", "ＡＢ\u0301Ｃ", "①②北京Ⅻ", "e\u0301", "\u0301\u0302北"}
	files, _ := filepath.Glob("../../shared/corpus/gne-zh/*/*.html")
	more, _ := filepath.Glob("../../shared/corpus/readability/*/expected.html")
	for _, name := range append(files, more...) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(b))
	}
	for _, s := range texts {
		if got, want := mustNormalize(s), norm.NFKC.String(s); got != want {
			t.Errorf("normalize(%.60q) differs from norm.NFKC", s)
		}
	}
}

func mustNormalize(s string) string {
	got, _ := normalize(s, nil)
	return got
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"", "abc", "北京，上海。", "ＡＢＣ　１２３", "e\u0301", "…", "\xffx", "ｶﾞ", "Å", "北e\u0301京"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, _ := normalize(s, nil)
		if want := norm.NFKC.String(s); got != want {
			t.Errorf("normalize(%q) = %q, want %q", s, got, want)
		}
	})
}

// fastNFKC appends the NFKC form of text to dst if every rune of text is
// one that fastRune handles, and reports whether it did (tests use it to
// check fastRune's runes).
func fastNFKC(text string, dst []byte) ([]byte, bool) {
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		m, ok := fastRune(r)
		if !ok {
			return dst, false
		}
		dst = utf8.AppendRune(dst, m)
		i += size
	}
	return dst, true
}
