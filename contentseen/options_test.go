package contentseen

import (
	"errors"
	"strings"
	"testing"
)

func TestOptionsString(t *testing.T) {
	tests := []struct {
		o    Options
		want string
	}{
		{Options{}, "words,min=8"},
		{Options{Kind: Words, N: 1, MinFeatures: 8}, "words,min=8"},
		{Options{Kind: WordShingles}, "word-shingles:2,min=8"},
		{Options{Kind: WordShingles, N: 3}, "word-shingles:3,min=8"},
		{Options{Kind: CharShingles}, "char-shingles:4,min=8"},
		{Options{Kind: CharShingles, N: 5, MinFeatures: 20}, "char-shingles:5,min=20"},
	}
	for _, tt := range tests {
		if got := tt.o.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.o, got, tt.want)
		}
	}
}

func TestOptionsStringIDFDigest(t *testing.T) {
	a := Options{IDF: map[string]float64{"cat": 2, "dog": 1.5}}
	b := Options{IDF: map[string]float64{"dog": 1.5, "cat": 2}}
	c := Options{IDF: map[string]float64{"cat": 2, "dog": 1.25}}
	if s := a.String(); !strings.HasPrefix(s, "words,min=8,idf=") || len(s) != len("words,min=8,idf=")+16 {
		t.Errorf("String() = %q, want words,min=8,idf= and 16 hex digits", s)
	}
	if a.String() != b.String() {
		t.Errorf("equal tables: %q != %q", a.String(), b.String())
	}
	if a.String() == c.String() {
		t.Errorf("different tables give the same string %q", a.String())
	}
	if _, err := ParseOptions(a.String()); err == nil {
		t.Errorf("ParseOptions(%q) succeeded, want an error (tables come from code)", a.String())
	}
}

func TestParseOptionsRoundTrip(t *testing.T) {
	for _, s := range []string{
		"words,min=8", "words,min=1", "word-shingles:2,min=8", "word-shingles:3,min=12",
		"char-shingles:4,min=8", "char-shingles:64,min=100",
	} {
		o, err := ParseOptions(s)
		if err != nil {
			t.Errorf("ParseOptions(%q): %v", s, err)
			continue
		}
		if got := o.String(); got != s {
			t.Errorf("ParseOptions(%q).String() = %q, want the input", s, got)
		}
	}
}

func TestParseOptionsShortForms(t *testing.T) {
	tests := []struct{ in, want string }{
		{"words", "words,min=8"},
		{"word-shingles", "word-shingles:2,min=8"},
		{"word-shingles:3", "word-shingles:3,min=8"},
		{"char-shingles", "char-shingles:4,min=8"},
		{"words:1,min=3", "words,min=3"},
	}
	for _, tt := range tests {
		o, err := ParseOptions(tt.in)
		if err != nil {
			t.Errorf("ParseOptions(%q): %v", tt.in, err)
			continue
		}
		if got := o.String(); got != tt.want {
			t.Errorf("ParseOptions(%q).String() = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseOptionsRejects(t *testing.T) {
	tests := []struct{ in, wantInErr string }{
		{"", "unknown kind"},
		{"bigrams", "unknown kind"},
		{"Words", "unknown kind"},
		{"words:2", "unigrams"},
		{"word-shingles:0", "shingle size"},
		{"word-shingles:-1", "shingle size"},
		{"word-shingles:x", "shingle size"},
		{"char-shingles:65", "want 1 to 64"},
		{"words,min=0", "min"},
		{"words,min=abc", "min"},
		{"words,min=3,min=4", "repeated"},
		{"words,max=3", "unknown field"},
		{"words,", "bad"},
		{"words,idf=0123456789abcdef", "idf table"},
	}
	for _, tt := range tests {
		_, err := ParseOptions(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.wantInErr) {
			t.Errorf("ParseOptions(%q) error = %v, want one mentioning %q", tt.in, err, tt.wantInErr)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	if err := (Options{}).Validate(); err != nil {
		t.Errorf("zero Options: %v", err)
	}
	// Every bad field is named, not just the first.
	err := Options{Kind: Words, N: 3, MinFeatures: -1, IDF: map[string]float64{"x": -2}}.Validate()
	for _, want := range []string{"n = 3", "min features = -1", `idf["x"]`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to mention %q", err, want)
		}
	}
	if _, err := NewFingerprinter(Options{Kind: "bigrams"}); err == nil {
		t.Error("NewFingerprinter accepted kind bigrams")
	}
	if errors.Is(err, ErrNotEnoughContent) {
		t.Error("a validation error wraps ErrNotEnoughContent")
	}
}
