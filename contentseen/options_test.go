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
		{Options{}, "words,min=8,tok=2"},
		{Options{Kind: Words, N: 1, MinFeatures: 8}, "words,min=8,tok=2"},
		{Options{Kind: WordShingles}, "word-shingles:2,min=8,tok=2"},
		{Options{Kind: WordShingles, N: 3}, "word-shingles:3,min=8,tok=2"},
		{Options{Kind: CharShingles}, "char-shingles:4,min=8,tok=2"},
		{Options{Kind: CharShingles, N: 5, MinFeatures: 20}, "char-shingles:5,min=20,tok=2"},
		{Options{Tokenizer: Tokenizer2}, "words,min=8,tok=2"},
		// Tokenizer 1 keeps the strings indexes recorded before versions.
		{Options{Tokenizer: Tokenizer1}, "words,min=8"},
		{Options{Kind: CharShingles, N: 5, MinFeatures: 20, Tokenizer: Tokenizer1}, "char-shingles:5,min=20"},
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
	if s := a.String(); !strings.HasPrefix(s, "words,min=8,tok=2,idf=") || len(s) != len("words,min=8,tok=2,idf=")+16 {
		t.Errorf("String() = %q, want words,min=8,tok=2,idf= and 16 hex digits", s)
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
		"words,min=8,tok=2", "words,min=1,tok=2", "word-shingles:2,min=8,tok=2", "word-shingles:3,min=12,tok=2",
		"char-shingles:4,min=8,tok=2", "char-shingles:64,min=100,tok=2", "words,min=8,tok=1", "char-shingles:5,min=20,tok=1",
	} {
		o, err := ParseOptions(s)
		if err != nil {
			t.Errorf("ParseOptions(%q): %v", s, err)
			continue
		}
		want := strings.TrimSuffix(s, ",tok=1") // tokenizer 1 is written without the field
		if got := o.String(); got != want {
			t.Errorf("ParseOptions(%q).String() = %q, want %q", s, got, want)
		}
	}
}

// A scheme an index recorded before tokenizer versions has no "tok" field:
// ParseScheme reads it as tokenizer 1 (ParseOptions, for config files, as
// the current one), and LegacyScheme lets such an index keep its
// tokenizer when the current options are asked for.
func TestParseSchemeLegacy(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
	}{{"words,min=8", Tokenizer1}, {"char-shingles:4,min=12", Tokenizer1}, {"words,min=8,tok=2", Tokenizer2}, {"words,min=8,tok=1", Tokenizer1}} {
		o, err := ParseScheme(tt.in)
		if err != nil || o.withDefaults().Tokenizer != tt.want {
			t.Errorf("ParseScheme(%q) = tokenizer %d, %v; want %d", tt.in, o.withDefaults().Tokenizer, err, tt.want)
		}
	}
	if o, _ := ParseOptions("words,min=8"); o.withDefaults().Tokenizer != CurrentTokenizer {
		t.Errorf("ParseOptions(\"words,min=8\") has tokenizer %d, want the current %d", o.withDefaults().Tokenizer, CurrentTokenizer)
	}
	tests := []struct {
		recorded string
		asked    Options
		want     string // "" for no adoption
	}{
		{"words,min=8", Options{}, "words,min=8"},
		{"char-shingles:4,min=12", Options{Kind: CharShingles, MinFeatures: 12}, "char-shingles:4,min=12"},
		{"words,min=8", Options{MinFeatures: 6}, ""},        // other options: a real mismatch
		{"words,min=8", Options{Kind: WordShingles}, ""},    // likewise
		{"words,min=8,tok=2", Options{}, ""},                // the same scheme: nothing to adopt
		{"words,min=8", Options{Tokenizer: Tokenizer1}, ""}, // asked for tokenizer 1 already
		{"garbage", Options{}, ""},
	}
	for _, tt := range tests {
		o, ok := LegacyScheme(tt.recorded, tt.asked)
		got := ""
		if ok {
			got = o.String()
		}
		if got != tt.want {
			t.Errorf("LegacyScheme(%q, %v) = %q, %v; want %q", tt.recorded, tt.asked, got, ok, tt.want)
		}
	}
}

func TestParseOptionsShortForms(t *testing.T) {
	tests := []struct{ in, want string }{
		{"words", "words,min=8,tok=2"},
		{"word-shingles", "word-shingles:2,min=8,tok=2"},
		{"word-shingles:3", "word-shingles:3,min=8,tok=2"},
		{"char-shingles", "char-shingles:4,min=8,tok=2"},
		{"words:1,min=3", "words,min=3,tok=2"},
		{"words,tok=1", "words,min=8"},
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
		{"words,tok=0", "tok"},
		{"words,tok=3", "tok"},
		{"words,tok=x", "tok"},
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
