package contentseen

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/zeebo/xxh3"
)

// FeatureKind selects what a Fingerprinter takes as features. Its
// constants are the names used in Options.String and in config files.
type FeatureKind string

// The feature kinds. Shingles are built over the token stream after
// stop-word removal, so "the cat sat" and "a cat sat" give the same
// shingles.
const (
	// Words: every distinct token is a feature (word unigrams). The default.
	Words FeatureKind = "words"
	// WordShingles: every run of N consecutive tokens, joined by one space.
	WordShingles FeatureKind = "word-shingles"
	// CharShingles: every run of N consecutive characters (runes) of the
	// tokens joined by single spaces.
	CharShingles FeatureKind = "char-shingles"
)

// Defaults for the zero Options fields.
const (
	// DefaultMinFeatures is the number of distinct features below which a
	// text is "not enough content". Eight distinct words is about one short
	// sentence after stop words are dropped. Below that, each feature flips
	// many bits on its own, so a single changed word moves the fingerprint
	// past k=3; and near-empty pages ("Loading…", "404 not found") would
	// otherwise collide with every other near-empty page.
	DefaultMinFeatures = 8

	// Tokenizer1 is the tokenizer of fingerprints made before scripts
	// were handled: Han runs segmented as they are, kana and Thai runs
	// one token each. Data directories made then record it (their scheme
	// has no "tok" field), and keep being fingerprinted with it.
	Tokenizer1 = 1
	// Tokenizer2 converts Traditional Chinese to Simplified before
	// segmentation (OpenCC t2s) and turns runs of kana, Thai, Lao, Khmer
	// and Myanmar script into character bigrams (scripts.go). The default.
	Tokenizer2 = 2
	// CurrentTokenizer is what a zero Options.Tokenizer means.
	CurrentTokenizer = Tokenizer2

	defaultWordShingleN = 2
	defaultCharShingleN = 4
	maxShingleN         = 64
)

// ErrNotEnoughContent reports a text with fewer distinct features than
// Options.MinFeatures. The error returned wraps it and gives the count.
var ErrNotEnoughContent = errors.New("contentseen: not enough content")

// Options selects how a Fingerprinter turns text into features. The zero
// value is word unigrams with the default minimum. An index records
// Options.String so that a reopened index never mixes schemes.
//
// NewFingerprinter copies the options but not the IDF map: do not modify
// the map while a Fingerprinter made from it is in use. An Options value
// is otherwise a plain value, safe to share.
type Options struct {
	// Kind of feature; "" means Words.
	Kind FeatureKind
	// N is the shingle size; 0 means the kind's default (words: 1,
	// word-shingles: 2, char-shingles: 4). Words accepts only 0 or 1.
	N int
	// MinFeatures is the number of distinct features below which
	// Fingerprint returns ErrNotEnoughContent; 0 means DefaultMinFeatures.
	MinFeatures int
	// Tokenizer is the version of the tokenizer (normalisation,
	// segmentation, script handling): Tokenizer1 or Tokenizer2; 0 means
	// CurrentTokenizer. Fingerprints of different versions are not
	// comparable, so String names it.
	Tokenizer int
	// IDF optionally multiplies each feature's weight 1+ln(tf) by
	// IDF[feature text] (the text as Fingerprinter.Features reports it).
	// A feature missing from the table gets the table's largest value: an
	// unseen feature is assumed rare. nil means no IDF. The table is not
	// part of String beyond a digest, so it must come from code, not config.
	IDF map[string]float64
}

// withDefaults returns o with zero fields replaced by their defaults.
func (o Options) withDefaults() Options {
	if o.Kind == "" {
		o.Kind = Words
	}
	if o.N == 0 {
		switch o.Kind {
		case Words:
			o.N = 1
		case WordShingles:
			o.N = defaultWordShingleN
		case CharShingles:
			o.N = defaultCharShingleN
		}
	}
	if o.MinFeatures == 0 {
		o.MinFeatures = DefaultMinFeatures
	}
	if o.Tokenizer == 0 {
		o.Tokenizer = CurrentTokenizer
	}
	return o
}

// Validate reports every invalid field, joined into one error.
func (o Options) Validate() error {
	var errs []error
	switch o.Kind {
	case "", Words:
		if o.N != 0 && o.N != 1 {
			errs = append(errs, fmt.Errorf("contentseen: options: n = %d: words are unigrams, use %q for n > 1", o.N, WordShingles))
		}
	case WordShingles, CharShingles:
		if o.N < 0 || o.N > maxShingleN {
			errs = append(errs, fmt.Errorf("contentseen: options: n = %d: want 1 to %d", o.N, maxShingleN))
		}
	default:
		errs = append(errs, fmt.Errorf("contentseen: options: unknown kind %q: want %q, %q or %q", o.Kind, Words, WordShingles, CharShingles))
	}
	if o.MinFeatures < 0 {
		errs = append(errs, fmt.Errorf("contentseen: options: min features = %d: want >= 0", o.MinFeatures))
	}
	if o.Tokenizer < 0 || o.Tokenizer > CurrentTokenizer {
		errs = append(errs, fmt.Errorf("contentseen: options: tokenizer = %d: want %d or %d (0 for %d)", o.Tokenizer, Tokenizer1, Tokenizer2, CurrentTokenizer))
	}
	for k, v := range o.IDF {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			errs = append(errs, fmt.Errorf("contentseen: options: idf[%q] = %v: want a finite value >= 0", k, v))
			break
		}
	}
	return errors.Join(errs...)
}

// String returns the canonical text of the options, with defaults filled
// in, for example "words,min=8,tok=2", "word-shingles:3,min=8,tok=2" or
// "char-shingles:4,min=12,tok=2". Options meaning the same thing give the
// same string, so an index can compare the string it recorded with the
// current one. Tokenizer1 writes no "tok" field: its strings are the ones
// indexes recorded before there were versions (ParseScheme reads them
// back as Tokenizer1). When IDF is set, ",idf=" and a 16-hex-digit XXH3
// digest of the sorted table is appended; ParseOptions rejects that part,
// because a table cannot come from a string.
func (o Options) String() string {
	d := o.withDefaults()
	var b strings.Builder
	b.WriteString(string(d.Kind))
	if d.Kind != Words || d.N != 1 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(d.N))
	}
	b.WriteString(",min=")
	b.WriteString(strconv.Itoa(d.MinFeatures))
	if d.Tokenizer != Tokenizer1 {
		b.WriteString(",tok=")
		b.WriteString(strconv.Itoa(d.Tokenizer))
	}
	if o.IDF != nil {
		fmt.Fprintf(&b, ",idf=%016x", idfDigest(o.IDF))
	}
	return b.String()
}

// idfDigest hashes the table in key order so that equal tables give equal
// digests whatever the map's iteration order.
func idfDigest(idf map[string]float64) uint64 {
	keys := make([]string, 0, len(idf))
	for k := range idf {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	h := xxh3.New()
	var buf []byte
	for _, k := range keys {
		buf = strconv.AppendQuote(buf[:0], k)
		buf = append(buf, '=')
		buf = strconv.AppendFloat(buf, idf[k], 'g', -1, 64)
		buf = append(buf, '\n')
		if _, err := h.Write(buf); err != nil {
			panic(err) // xxh3.Hasher.Write never fails
		}
	}
	return h.Sum64()
}

// ParseOptions parses the text written by String, and the shorter forms
// a config file may use: "words", "word-shingles", "word-shingles:3",
// "char-shingles:5,min=20", "words,tok=1". Fields left out take their
// defaults (the current tokenizer). The result is validated.
func ParseOptions(s string) (Options, error) {
	return parseOptions(s, 0)
}

// ParseScheme parses a scheme an index recorded (String's text): as
// ParseOptions, except that a scheme without a "tok" field was written
// before tokenizer versions existed and means Tokenizer1.
func ParseScheme(s string) (Options, error) {
	return parseOptions(s, Tokenizer1)
}

// LegacyScheme reports whether recorded, the scheme of an existing index,
// is asked with an older tokenizer: the same kind, shingle size and
// minimum, tokenizer 1 (written before versions existed, or so). It then
// returns the options to keep fingerprinting that index with, so that a
// data directory made before tokenizer 2 keeps working as it is instead
// of mixing two kinds of fingerprints. An IDF table in asked is kept.
func LegacyScheme(recorded string, asked Options) (Options, bool) {
	o, err := ParseScheme(recorded)
	if err != nil || o.withDefaults().Tokenizer != Tokenizer1 || asked.withDefaults().Tokenizer == Tokenizer1 {
		return Options{}, false
	}
	o.IDF = asked.IDF
	same := asked
	same.Tokenizer = Tokenizer1
	if o.String() != same.String() || o.String() != recorded {
		return Options{}, false
	}
	return o, true
}

func parseOptions(s string, defaultTokenizer int) (Options, error) {
	o := Options{Tokenizer: defaultTokenizer}
	parts := strings.Split(s, ",")
	kind, n, hasN := strings.Cut(parts[0], ":")
	o.Kind = FeatureKind(kind)
	if hasN {
		v, err := strconv.Atoi(n)
		if err != nil || v <= 0 {
			return Options{}, fmt.Errorf("contentseen: parse options %q: shingle size %q: want a positive integer", s, n)
		}
		o.N = v
	}
	switch o.Kind {
	case Words, WordShingles, CharShingles:
	default:
		return Options{}, fmt.Errorf("contentseen: parse options %q: unknown kind %q: want %q, %q or %q", s, kind, Words, WordShingles, CharShingles)
	}
	seen := map[string]bool{}
	for _, p := range parts[1:] {
		key, val, ok := strings.Cut(p, "=")
		if !ok || seen[key] {
			return Options{}, fmt.Errorf("contentseen: parse options %q: bad or repeated field %q", s, p)
		}
		seen[key] = true
		switch key {
		case "min":
			v, err := strconv.Atoi(val)
			if err != nil || v <= 0 {
				return Options{}, fmt.Errorf("contentseen: parse options %q: min %q: want a positive integer", s, val)
			}
			o.MinFeatures = v
		case "tok":
			v, err := strconv.Atoi(val)
			if err != nil || v < Tokenizer1 || v > CurrentTokenizer {
				return Options{}, fmt.Errorf("contentseen: parse options %q: tok %q: want %d to %d", s, val, Tokenizer1, CurrentTokenizer)
			}
			o.Tokenizer = v
		case "idf":
			return Options{}, fmt.Errorf("contentseen: parse options %q: an idf table cannot be read from text; set Options.IDF in code and compare String values", s)
		default:
			return Options{}, fmt.Errorf("contentseen: parse options %q: unknown field %q", s, key)
		}
	}
	if err := o.Validate(); err != nil {
		return Options{}, fmt.Errorf("contentseen: parse options %q: %w", s, err)
	}
	return o, nil
}
