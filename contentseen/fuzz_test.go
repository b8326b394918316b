package contentseen

import (
	"math/bits"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzDistance(f *testing.F) {
	f.Add(uint64(0), uint64(0))
	f.Add(uint64(0), ^uint64(0))
	f.Add(uint64(0xdeadbeef), uint64(0x12345678))
	f.Fuzz(func(t *testing.T, a, b uint64) {
		d := Distance(Fingerprint(a), Fingerprint(b))
		if d != Distance(Fingerprint(b), Fingerprint(a)) {
			t.Errorf("Distance(%#x, %#x) = %d is not symmetric", a, b, d)
		}
		if d < 0 || d > 64 || d != bits.OnesCount64(a^b) {
			t.Errorf("Distance(%#x, %#x) = %d, want popcount of the XOR in [0, 64]", a, b, d)
		}
		if (d == 0) != (a == b) {
			t.Errorf("Distance(%#x, %#x) = %d", a, b, d)
		}
	})
}

// FuzzFingerprint: arbitrary strings, including invalid UTF-8, never make
// fingerprinting panic, and Tokens gives valid UTF-8 without spaces.
func FuzzFingerprint(f *testing.F) {
	for _, s := range []string{"", "the cat sat on the mat", "3.14,1,000.", "don't ’s", "Ｆｕｌｌ ΣΑΣ café",
		"本市交通运输局昨天宣布", "臺灣的半導體", "\xff\xfe9.\xe2", "a'\xc3", "1,\x80", strings.Repeat("中", 300)} {
		f.Add(s)
	}
	fps := map[string]*Fingerprinter{}
	for _, s := range []string{"words,min=1", "word-shingles:3,min=1", "char-shingles:4,min=1"} {
		o, err := ParseOptions(s)
		if err != nil {
			f.Fatal(err)
		}
		fp, err := NewFingerprinter(o)
		if err != nil {
			f.Fatal(err)
		}
		fps[s] = fp
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, fp := range fps {
			if _, n, err := fp.Fingerprint(s); err != nil && n > 0 {
				t.Errorf("%s: Fingerprint(%q) with %d features: %v", name, s, n, err)
			}
			fp.Features(s)
		}
		for _, tok := range Tokens(s) {
			if tok == "" || !utf8.ValidString(tok) || strings.ContainsRune(tok, ' ') {
				t.Errorf("Tokens(%q) has token %q", s, tok)
			}
		}
	})
}

// FuzzParseOptions: garbage gives an error, never a panic, and whatever
// parses prints back to a string that parses to the same options.
func FuzzParseOptions(f *testing.F) {
	for _, s := range []string{"words", "words,min=8", "word-shingles:3", "char-shingles:4,min=20", "", ",", ":", "words:1:2", "char-shingles:99999999999999999999", "words,min=-1", "words,idf=00", "words,tok=1", "char-shingles:5,min=9,tok=2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseOptions(s)
		if err != nil {
			return
		}
		if err := o.Validate(); err != nil {
			t.Errorf("ParseOptions(%q) gave invalid options: %v", s, err)
		}
		// String is the scheme an index records: ParseScheme reads it back
		// (tokenizer 1 is written without its field).
		again, err := ParseScheme(o.String())
		if err != nil || again.String() != o.String() {
			t.Errorf("ParseOptions(%q).String() = %q does not round-trip through ParseScheme: %v", s, o.String(), err)
		}
	})
}
