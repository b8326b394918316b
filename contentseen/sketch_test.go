package contentseen

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/zeebo/xxh3"
)

// TestSketchGolden pins the sketch's hashing (shingles, bins,
// densification, b-bit values) and its encoding: sketches are persisted
// with pages. The vectors were computed by this implementation when the
// format was frozen (SketchVersion 1); a change here invalidates every
// stored sketch and needs a new SketchVersion.
func TestSketchGolden(t *testing.T) {
	for _, tc := range []struct {
		text string
		want string // hex of MarshalBinary
	}{
		{"", "0100" + strings.Repeat("00", SketchBins)},
		{"one", "0101" + strings.Repeat("5f", SketchBins)},
		{"The quick brown fox jumps over the lazy dog near the river bank today.",
			"0108b359e2b3e25f5f5fe2e2591515f7f7155f159cf7b39cf7597a5f59b3f7f79c591559f79cb359b37a7a599c159c595f5915b3f7159cf79cf79c9c9c157a5f5f5f59f7159cf77a5fe29ce259b39cb359597a597a595f9c9c59e2595ff7b3597a7ab39c9c9c9c1515e25f9c59595f595fb3597a7a5fe29c597af7f77a159c5ff7f7"},
		{"山区茶园首次向游客开放，游客可以参观采茶、制茶的全过程。",
			"010a386f66d2822e382e662ed26f2ea6ce6f712e826671a6ce2e663882cea6d22ece38712e66386f2ecea62ececea66f6fcece2e82662e71d2666f2e2e8271d2d266a682a6662e6f2e71ce7138d23838d22e386fce2ed271662e2e38663838d22ece662e2ea67171716f66826671ced2a6a6382e822ece66662e71d2d2716666a62e"},
	} {
		b, err := SketchOf(tc.text).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(b); got != tc.want {
			t.Errorf("SketchOf(%q) = %s, want %s", tc.text, got, tc.want)
		}
	}
}

// TestTextDigestGolden pins TextDigest (persisted as the exact-match key)
// and checks that it ignores punctuation, spacing and case.
func TestTextDigestGolden(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"", "99aa06d3014798d86001c324468d497f"},
		{"one", "0a1c6d4cf41eb499911faba7321fe1a0"},
		{"The quick brown fox jumps over the lazy dog near the river bank today.", "97318bb48e17757abc0fb6e0c57b7a01"},
		{"山区茶园首次向游客开放，游客可以参观采茶、制茶的全过程。", "d82949fdb3636c6dd6aaab3a290532d9"},
	} {
		d := TextDigest(tc.text)
		if got := hex.EncodeToString(d[:]); got != tc.want {
			t.Errorf("TextDigest(%q) = %s, want %s", tc.text, got, tc.want)
		}
	}
	same := [][2]string{
		{"Prices rose.\nMarkets fell.", "Prices rose\n.\nMarkets  fell"},
		{"PRICES rose", "prices rose"},
		{"ＡＢＣ 123", "abc123"},
		{"价格上涨。", "价格上涨"},
	}
	for _, p := range same {
		if TextDigest(p[0]) != TextDigest(p[1]) {
			t.Errorf("TextDigest(%q) != TextDigest(%q), want equal", p[0], p[1])
		}
	}
	if TextDigest("prices rose 5%") == TextDigest("prices rose 6%") {
		t.Error("TextDigest ignores digits, want them kept")
	}
	// The byte loop agrees with the definition: XXH3-128 of letterKey.
	r := rand.New(rand.NewPCG(5, 6))
	alphabet := []rune("aZ9 .,\n-é中文ＡＢ１ー々\u0301\U0001F600")
	for range 2000 {
		rs := make([]rune, r.IntN(700))
		for i := range rs {
			rs[i] = alphabet[r.IntN(len(alphabet))]
		}
		s := string(rs)
		if got, want := TextDigest(s), xxh3.HashString128(letterKey(s)).Bytes(); got != want {
			t.Fatalf("TextDigest(%q) = %x, want %x (XXH3-128 of %q)", s, got, want, letterKey(s))
		}
	}
}

func TestSketchRoundTrip(t *testing.T) {
	sk := SketchOf("a few words to make a sketch of, more than three of them")
	b, err := sk.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var got Sketch
	if err := got.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if got != sk {
		t.Errorf("round trip: got %+v, want %+v", got, sk)
	}
	for _, bad := range [][]byte{nil, {2}, b[:len(b)-1], append(b, 0)} {
		if err := got.UnmarshalBinary(bad); !errors.Is(err, ErrBadSketch) {
			t.Errorf("UnmarshalBinary(%x) = %v, want ErrBadSketch", bad, err)
		}
	}
}

// randomText returns n distinct random words (letters only, so none is a
// stop word of the tokenizer's lists with high probability).
func randomWords(r *rand.Rand, n int) []string {
	ws := make([]string, n)
	for i := range ws {
		var b strings.Builder
		for range 6 + r.IntN(5) {
			b.WriteByte(byte('a' + r.IntN(26)))
		}
		ws[i] = b.String()
	}
	return ws
}

// exactResemblance computes Jaccard and containment of the 3-shingle sets
// of two texts, as the sketch defines them, from the token streams.
func exactResemblance(a, b string) (j, c float64) {
	set := func(s string) map[string]bool {
		ts := Tokens(s)
		w := min(SketchShingle, len(ts))
		m := map[string]bool{}
		for i := 0; i+w <= len(ts); i++ {
			m[strings.Join(ts[i:i+w], " ")] = true
		}
		return m
	}
	sa, sb := set(a), set(b)
	inter := 0
	for k := range sa {
		if sb[k] {
			inter++
		}
	}
	return float64(inter) / float64(len(sa)+len(sb)-inter), float64(inter) / float64(min(len(sa), len(sb)))
}

// TestSketchEstimates checks Compare against exact Jaccard similarity and
// containment on random texts: copies with a share of the words replaced,
// and texts with lines added (containment). The error must stay within
// five standard errors of a 128-bin MinHash, sqrt(J(1-J)/128), plus 0.02
// for the b-bit collisions; seeds are fixed, so the test is deterministic.
func TestSketchEstimates(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 4))
	for _, n := range []int{40, 150, 600, 3000} {
		for _, frac := range []float64{0, 0.02, 0.1, 0.3, 0.6, 1} {
			name := fmt.Sprintf("words=%d/edited=%.2f", n, frac)
			words := randomWords(r, n)
			edited := append([]string(nil), words...)
			fresh := randomWords(r, n)
			for i := range edited {
				if r.Float64() < frac {
					edited[i] = fresh[i]
				}
			}
			a, b := strings.Join(words, " "), strings.Join(edited, " ")
			got := Compare(SketchOf(a), SketchOf(b))
			wantJ, _ := exactResemblance(a, b)
			tol := 5*math.Sqrt(wantJ*(1-wantJ)/SketchBins) + 0.02
			if math.Abs(got.Similarity-wantJ) > tol {
				t.Errorf("%s: Similarity = %.3f, exact %.3f (tolerance %.3f)", name, got.Similarity, wantJ, tol)
			}
		}
		// The article plus a tenth more text: contained.
		words := randomWords(r, n)
		a := strings.Join(words, " ")
		b := a + " " + strings.Join(randomWords(r, n/10+1), " ")
		got := Compare(SketchOf(a), SketchOf(b))
		wantJ, wantC := exactResemblance(a, b)
		tol := 5*math.Sqrt(wantJ*(1-wantJ)/SketchBins) + 0.02
		if math.Abs(got.Containment-wantC) > 2*tol || math.Abs(got.Similarity-wantJ) > tol {
			t.Errorf("words=%d plus 10%%: Similarity %.3f Containment %.3f, exact %.3f %.3f", n, got.Similarity, got.Containment, wantJ, wantC)
		}
	}
}

func TestCompareEmpty(t *testing.T) {
	if got := Compare(Sketch{}, SketchOf("some words here and there")); got != (Resemblance{}) {
		t.Errorf("Compare(empty, x) = %+v, want zero", got)
	}
	sk := SketchOf("some words here and there")
	if got := Compare(sk, sk); got.Similarity != 1 || got.Containment != 1 || got.SizeRatio != 1 {
		t.Errorf("Compare(x, x) = %+v, want all 1", got)
	}
}

func TestStripTitle(t *testing.T) {
	for _, tc := range []struct{ name, text, title, want string }{
		{"headline equals title", "Tea garden opens\nThe garden opened.", "Tea garden opens", "The garden opened."},
		{"title with site name", "Tea garden opens\nThe garden opened.", "Tea Garden Opens - Riverside Blog", "The garden opened."},
		{"chinese with site", "山区茶园首次向游客开放\n茶园本周开放。", "山区茶园首次向游客开放 - 转载", "茶园本周开放。"},
		{"after a kicker line", "Travel\nTea garden opens\nThe garden opened.", "Tea garden opens | Site", "Travel\nThe garden opened."},
		{"only the headline", "Tea garden opens", "Tea garden opens", ""},
		{"no title", "Tea garden opens\nThe garden opened.", "", "Tea garden opens\nThe garden opened."},
		{"another headline", "Bus route changes\nThe garden opened.", "Tea garden opens", "Bus route changes\nThe garden opened."},
		{"deep line kept", "a\nb\nc\nTea garden opens", "Tea garden opens", "a\nb\nc\nTea garden opens"},
		{"short word of a long title kept", "Garden\nThe garden opened.", "The old tea garden in the hills opens to visitors this week - Riverside", "Garden\nThe garden opened."},
	} {
		if got := StripTitle(tc.text, tc.title); got != tc.want {
			t.Errorf("%s: StripTitle(%q, %q) = %q, want %q", tc.name, tc.text, tc.title, got, tc.want)
		}
	}
}

// BenchmarkJudgeText measures what the two-stage judge adds to a page's
// fingerprinting: "fingerprint" is Fingerprint alone, "judge" is
// StripTitle, FingerprintSketch (one tokenisation for both) and
// TextDigest, as the crawler runs them; "compare" is one candidate's
// verification (Compare). On the corpus texts (English, Chinese).
func BenchmarkJudgeText(b *testing.B) {
	for _, c := range []struct {
		name           string
		pattern        string
		minHan, maxHan float64
	}{{"en", "readability/*/source.html", 0, 0.05}, {"zh", "gne-zh/*/*.html", 0.3, 1.01}} {
		texts := corpusTexts(b, c.pattern, c.minHan, c.maxHan)
		f, err := NewFingerprinter(Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := PreloadChinese(); err != nil {
			b.Fatal(err)
		}
		size := 0
		for _, t := range texts {
			size += len(t)
		}
		b.Run(c.name+"/fingerprint", func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				for _, t := range texts {
					if _, _, err := f.Fingerprint(t); err != nil && !errors.Is(err, ErrNotEnoughContent) {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run(c.name+"/judge", func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				for _, t := range texts {
					t = StripTitle(t, "A headline that is not there")
					if _, _, _, err := f.FingerprintSketch(t); err != nil && !errors.Is(err, ErrNotEnoughContent) {
						b.Fatal(err)
					}
					_ = TextDigest(t)
				}
			}
		})
	}
	x, y := SketchOf("one two three four five six seven"), SketchOf("one two three four five six eight")
	b.Run("compare", func(b *testing.B) {
		for b.Loop() {
			_ = Compare(x, y)
		}
	})
}
