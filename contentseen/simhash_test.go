package contentseen

import (
	"strings"
	"testing"
)

// The golden values were produced with the reference C implementation,
// libxxhash 0.8.1 (Debian package libxxhash0), through Python ctypes:
//
//	lib = ctypes.CDLL("libxxhash.so.0"); lib.XXH3_64bits(b, len(b))
//
// The inputs cover each of XXH3's length classes (0, 1-3, 4-8, 9-16,
// 17-128, 129-240, more than 240 bytes) and multi-byte UTF-8.
func TestHashFeatureGolden(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
	}{
		{"", 0x2d06800538d394c2},
		{"a", 0xe6c632b61e964e1f},
		{"cat", 0x42548a8a111c54ee},
		{"12345678", 0x62e29b4cad9e2ef6},
		{"0123456789abcdef", 0x64439946d8fa212d},
		{"don't", 0x0c7ef667e2910fd2},
		{"the cat sat on the mat", 0x4ef85e32f8785788},
		{"北京", 0x25e0bd0fa0da6684},
		{"中华人民共和国国务院", 0x6fc56a53fe4020a0},
		{strings.Repeat("x", 100), 0xc90984ffdf50ce42},
		{strings.Repeat("x", 200), 0x50ef124fb1e4de53},
		{strings.Repeat("x", 1000), 0xc0a4877b962cba82},
		{strings.Repeat("word-shingles are joined by one space", 10), 0x93d90e3b1bac6da1},
	}
	for _, tt := range tests {
		if got := HashFeature(tt.in); got != tt.want {
			t.Errorf("HashFeature(%.20q) = %#016x, want %#016x", tt.in, got, tt.want)
		}
		if got := hashBytes([]byte(tt.in)); got != tt.want {
			t.Errorf("hashBytes(%.20q) = %#016x, want %#016x", tt.in, got, tt.want)
		}
	}
}

func TestFromFeatures(t *testing.T) {
	h := func(s string) Fingerprint { return Fingerprint(HashFeature(s)) }
	tests := []struct {
		name string
		fs   []Feature
		want Fingerprint
	}{
		{"no features give 0 (every sum is 0, and a tie gives bit 0)", nil, 0},
		{"one feature gives its own hash", []Feature{{"cat", 1}}, h("cat")},
		{"the weight's size does not matter alone", []Feature{{"cat", 0.01}}, h("cat")},
		{"a negative weight gives the complement", []Feature{{"cat", -1}}, ^h("cat")},
		{"zero weight contributes nothing", []Feature{{"cat", 0}}, 0},
		{"equal and opposite cancel to 0", []Feature{{"cat", 2}, {"cat", -2}}, 0},
		{"a heavy feature outvotes a light one", []Feature{{"cat", 3}, {"dog", 1}}, h("cat")},
		{"two equal features: ties where they differ give 0", []Feature{{"cat", 1}, {"dog", 1}}, h("cat") & h("dog")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FromFeatures(tt.fs); got != tt.want {
				t.Errorf("FromFeatures(%v) = %v, want %v", tt.fs, got, tt.want)
			}
		})
	}
}

func TestFromHashesMatchesFromFeatures(t *testing.T) {
	fs := []Feature{{"riverside", 2.5}, {"park", 1}, {"council", 1.7}, {"mill", 0.4}, {"cat", -0.3}}
	hs := make([]uint64, len(fs))
	ws := make([]float64, len(fs))
	for i, f := range fs {
		hs[i], ws[i] = HashFeature(f.Text), f.Weight
	}
	if got, want := FromHashes(hs, ws), FromFeatures(fs); got != want {
		t.Errorf("FromHashes = %v, FromFeatures = %v, want equal", got, want)
	}
	unit := make([]Feature, len(fs))
	for i, f := range fs {
		unit[i] = Feature{f.Text, 1}
	}
	if got, want := FromHashes(hs, nil), FromFeatures(unit); got != want {
		t.Errorf("FromHashes(nil weights) = %v, want %v (all weights 1)", got, want)
	}
}

func TestFromHashesPanicsOnLengthMismatch(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("FromHashes with 2 hashes and 1 weight did not panic")
		}
	}()
	FromHashes([]uint64{1, 2}, []float64{1})
}

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b Fingerprint
		want int
		sim  float64
	}{
		{0, 0, 0, 1},
		{0, ^Fingerprint(0), 64, 0},
		{0xff, 0x0f, 4, 60.0 / 64},
		{0x8000000000000001, 0x1, 1, 63.0 / 64},
	}
	for _, tt := range tests {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%#x, %#x) = %d, want %d", uint64(tt.a), uint64(tt.b), got, tt.want)
		}
		if got := Similarity(tt.a, tt.b); got != tt.sim {
			t.Errorf("Similarity(%#x, %#x) = %v, want %v", uint64(tt.a), uint64(tt.b), got, tt.sim)
		}
	}
}

func TestParseFingerprintRoundTrip(t *testing.T) {
	for _, fp := range []Fingerprint{0, 1, 0xdeadbeef, ^Fingerprint(0)} {
		got, err := ParseFingerprint(fp.String())
		if err != nil || got != fp {
			t.Errorf("ParseFingerprint(%q) = %v, %v, want %v", fp.String(), got, err, fp)
		}
	}
	for _, bad := range []string{"", "xyz", "00000000000000000", "-1"} {
		if _, err := ParseFingerprint(bad); err == nil {
			t.Errorf("ParseFingerprint(%q) succeeded, want an error", bad)
		}
	}
}
