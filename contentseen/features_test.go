package contentseen

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
)

func mustFingerprinter(t testing.TB, o Options) *Fingerprinter {
	t.Helper()
	f, err := NewFingerprinter(o)
	if err != nil {
		t.Fatalf("NewFingerprinter(%v): %v", o, err)
	}
	return f
}

func mustFingerprint(t testing.TB, f *Fingerprinter, text string) Fingerprint {
	t.Helper()
	fp, _, err := f.Fingerprint(text)
	if err != nil {
		t.Fatalf("Fingerprint(%.30q): %v", text, err)
	}
	return fp
}

func TestTokens(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"empty", "", []string{}},
		{"case folded, stop words dropped", "The Cat SAT on the Mat", []string{"cat", "sat", "mat"}},
		{"punctuation separates", "cats,dogs;birds...fish-chips", []string{"cats", "dogs", "birds", "fish", "chips"}},
		{"apostrophe inside a word", "Anna's book, 'quoted'", []string{"anna's", "book", "quoted"}},
		{"typographic apostrophe becomes ASCII", "Anna’s book", []string{"anna's", "book"}},
		{"numbers keep their separators", "pi is 3.14, not 1,000. End.", []string{"pi", "3.14", "1,000", "end"}},
		{"full-width Latin is NFKC-folded", "ＦＵＬＬ ｗｉｄｔｈ １２３", []string{"full", "width", "123"}},
		{"ligatures expanded", "ﬁnal ﬂow", []string{"final", "flow"}},
		{"combining accents composed", "cafe\u0301 naïve", []string{"café", "naïve"}},
		{"Greek final sigma folds", "ΟΔΟΣ οδός", []string{"οδοσ", "οδόσ"}},
		{"Cyrillic", "Привет Мир", []string{"привет", "мир"}},
		{"Chinese segmented, stop words dropped", "我们的城市在发展", []string{"城市", "发展"}},
		{"Chinese and Latin mixed", "我爱Go语言2024年", []string{"爱", "go", "语言", "2024", "年"}},
		{"full-width Chinese punctuation separates", "北京，上海。广州！", []string{"北京", "上海", "广州"}},
		{"Traditional converted to Simplified", "臺灣的半導體產業", []string{"台湾", "半导体", "产业"}},
		{"kana runs become bigrams", "これはペンです", []string{"これ", "れは", "はペ", "ペン", "ンで", "です"}},
		{"one kana between kanji stays whole", "東京に住む", []string{"东京", "に", "住", "む"}},
		{"Latin ends before kana", "Goのコード", []string{"go", "のコ", "コー", "ード"}},
		{"Thai marks stay on their consonant", "สวัสดี ครับ", []string{"สวั", "วัส", "สดี", "ครั", "รับ"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Tokens(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("Tokens(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// Tokenizer 1, the one of data directories made before tokenizer 2, is
// kept as it was: Traditional stays Traditional, kana runs stay whole.
func TestTokensTokenizer1(t *testing.T) {
	f := mustFingerprinter(t, Options{Tokenizer: Tokenizer1})
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"臺灣的半導體產業", []string{"臺灣", "半導體", "產業"}},
		{"これはペンです", []string{"これはペンです"}},
		{"Goのコード", []string{"goのコード"}},
		{"สวัสดี ครับ", []string{"สวัสดี", "ครับ"}},
	} {
		if got := f.Tokens(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("tokenizer 1: Tokens(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// The golden fingerprints were produced by this implementation and checked
// independently: a Python script took the Tokens of each text, built the
// features (words; word shingles as tokens joined by one space; character
// shingles as windows of the tokens joined by one space), hashed them with
// the reference libxxhash 0.8.1 (XXH3_64bits via ctypes), weighted them
// 1+ln(tf) and summed the SimHash; all values agreed. The Chinese ones also
// pin the segmentation (gse v0.80.3 dictionary, zhMinFreq).
func TestFingerprintGolden(t *testing.T) {
	tests := []struct {
		opts     string
		text     string
		want     Fingerprint
		features int
	}{
		// Tokenizer 1, as recorded before tokenizer 2 (data directories
		// made then keep these fingerprints).
		{"words,tok=1", article, 0xc7cf14bd0482e57b, 283},
		{"words,tok=1", newsZh, 0xeabe543296638320, 186},
		{"words,tok=1", newsZhTraditional, 0x7c95af2b9c418fb8, 44},
		{"word-shingles:2,tok=1", article, 0xd152735c95dc04e7, 372},
		{"word-shingles:3,tok=1", newsZh, 0xa43f0627e5111972, 221},
		{"char-shingles:4,tok=1", article, 0x675dd703f0ca6e7b, 1811},
		{"char-shingles:5,tok=1", newsZh, 0xfc09dcb15c2c4f86, 634},
		// Tokenizer 2 (the default): texts without Traditional Chinese,
		// kana or Thai keep tokenizer 1's fingerprints; the Traditional
		// sentences now get the fingerprint of their Simplified original.
		{"words", article, 0xc7cf14bd0482e57b, 283},
		{"words", newsZh, 0xeabe543296638320, 186},
		{"words", newsZhTraditional, 0x4e8edf33942383bc, 45},
		{"words", newsZhTraditionalOriginal, 0x4e8edf33942383bc, 45},
		{"word-shingles:2", article, 0xd152735c95dc04e7, 372},
		{"word-shingles:3", newsZh, 0xa43f0627e5111972, 221},
		{"char-shingles:4", article, 0x675dd703f0ca6e7b, 1811},
		{"char-shingles:5", newsZh, 0xfc09dcb15c2c4f86, 634},
	}
	for _, tt := range tests {
		o, err := ParseOptions(tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		f := mustFingerprinter(t, o)
		fp, n, err := f.Fingerprint(tt.text)
		if err != nil || fp != tt.want || n != tt.features {
			t.Errorf("%s: Fingerprint(%.12q) = %v, %d, %v; want %v, %d, nil", tt.opts, tt.text, fp, n, err, tt.want, tt.features)
		}
	}
}

// "The cat sat on the mat" against two texts, as in the seed material. The
// texts are short, so the minimum is lowered to 1.
func TestCatSatOnTheMat(t *testing.T) {
	f := mustFingerprinter(t, Options{MinFeatures: 1})
	a := mustFingerprint(t, f, "the cat sat on the mat")
	b := mustFingerprint(t, f, "the cat sat on a mat")
	c := mustFingerprint(t, f, "we all scream for ice cream")
	near, far := Distance(a, b), Distance(a, c)
	// Only stop words differ, so the features are equal.
	if near != 0 {
		t.Errorf("Distance(mat, a mat) = %d, want 0", near)
	}
	if far < 16 {
		t.Errorf("Distance(mat, ice cream) = %d, want >= 16 (unrelated texts sit near 32)", far)
	}
}

// How far an edit moves a fingerprint: for each bit, the chance that two
// texts differ is about θ/π, θ the angle between their weighted feature
// vectors, so the expected distance is 64·θ/π, and k=3 means a cosine of
// about 0.99. The distance for one particular edit is partly luck (which
// hashes the changed words have), so the tests below measure families of
// edits and state what held when they were written.
//
// The issue asks for two pairs within k=3 with word features: a Chinese
// article with a few phrases dropped, and an article with another title
// and an advertising line. That does NOT hold in general: over 56 ways of
// dropping three short phrases from a 520-character article the median is
// 5 bits (3 to 8), and over 50 title/advertisement variants of a 650-word
// article the median is 5 (3 to 8). Character 4-grams do better on the
// English reposts (median 3). A single dropped phrase, or an advertising
// line without a title change, mostly stays within 3 (TestNearDuplicates).
// Either way reposts stay far from unrelated texts (21 bits and more).

// TestNearDuplicates lists edits that stay within k=3 with word features.
func TestNearDuplicates(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		a, b    string
		maxDist int
	}{
		{"Chinese article, one phrase dropped", Options{}, newsZh, strings.Replace(newsZh, "专家指出，", "", 1), 3},
		{"Chinese article, another phrase dropped", Options{}, newsZh, strings.Replace(newsZh, "，单程花费一个多小时", "", 1), 3},
		{"article body, an advertising line added", Options{}, articleBody, articleBody + "\n\nDownload our app for breaking news alerts.", 3},
		{"article, a typo fixed", Options{}, article, strings.Replace(article, "neighbourhood", "neighborhood", 1), 3},
		{"article, repeated whitespace and line breaks", Options{}, article, strings.Join(strings.Fields(article), "\n  "), 0},
		{"article, a word in full-width letters", Options{}, "Ｃｏｕｎｃｉｌ " + articleBody, "Council " + articleBody, 0},
		{"Chinese article, full-width and ASCII punctuation", Options{}, newsZh, strings.NewReplacer("，", ",", "。", ".").Replace(newsZh), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := mustFingerprinter(t, tt.opts)
			a, b := mustFingerprint(t, f, tt.a), mustFingerprint(t, f, tt.b)
			if d := Distance(a, b); d > tt.maxDist {
				t.Errorf("%v: Distance(%v, %v) = %d, want <= %d", tt.opts, a, b, d, tt.maxDist)
			}
		})
	}
}

// distanceSpread fingerprints base and every variant with each feature
// kind, logs the spread of distances, and checks that every variant is
// within maxDist while the unrelated text is more than 16 bits away.
func distanceSpread(t *testing.T, base, unrelated string, variants []string, maxDist int) {
	t.Helper()
	for _, kind := range []FeatureKind{Words, WordShingles, CharShingles} {
		f := mustFingerprinter(t, Options{Kind: kind})
		fp := mustFingerprint(t, f, base)
		var ds []int
		for _, v := range variants {
			ds = append(ds, Distance(fp, mustFingerprint(t, f, v)))
		}
		slices.Sort(ds)
		far := Distance(fp, mustFingerprint(t, f, unrelated))
		t.Logf("%s: %d variants, median %d, range %d to %d; unrelated %d", kind, len(ds), ds[len(ds)/2], ds[0], ds[len(ds)-1], far)
		if ds[len(ds)-1] > maxDist || far <= 16 {
			t.Errorf("%s: variants up to %d bits, unrelated %d: want <= %d and > 16", kind, ds[len(ds)-1], far, maxDist)
		}
	}
}

// TestRepostDistances: the 650-word article under 10 titles x 5
// advertising lines. Measured when written: words median 5 (3 to 8),
// word-shingles:2 median 5 (2 to 7), char-shingles:4 median 3 (1 to 7);
// unrelated 21 to 37.
func TestRepostDistances(t *testing.T) {
	titles := []string{
		"Council backs riverside park plan for old textile mill site", "Riverside park gets the green light",
		"Old mill to become a park", "Green light for eleven hectare park on the river",
		"Park plan approved despite cost worries", "Councillors vote for new park in eastern districts",
		"Textile mill site will become meadows and a harbour", "New park for the east side",
		"Mayor wins vote on riverside park", "Rowing clubs and cafés react to park decision",
	}
	ads := []string{
		"Advertisement: subscribe now and read all our local news for one euro a month.",
		"Sponsored: compare mortgage rates in minutes.", "Download our app for breaking news alerts.",
		"Advertisement", "Follow us on social media for more stories like this.",
	}
	var variants []string
	for _, title := range titles {
		for _, ad := range ads {
			variants = append(variants, title+"\n\n"+articleBody+"\n\n"+ad)
		}
	}
	distanceSpread(t, article, unrelatedArticle, variants, 10)
}

// TestPhraseDropDistances: the Chinese article with every 3 of 8 phrases
// dropped (56 variants). Measured when written: words median 5 (3 to 8),
// word-shingles:2 median 5 (2 to 10), char-shingles:4 median 7 (3 to 10);
// unrelated 30 to 33.
func TestPhraseDropDistances(t *testing.T) {
	phrases := []string{
		"据介绍，", "与此同时，", "专家指出，", "，车辆配备无障碍设施和实时到站信息显示屏",
		"一位在南部工业园区上班的市民告诉记者，", "，单程花费一个多小时",
		"，但也需要在票价、换乘优惠和线路衔接等方面持续完善", "，开通三个月后还将根据客流数据进行评估和调整",
	}
	var variants []string
	for i := range phrases {
		for j := i + 1; j < len(phrases); j++ {
			for k := j + 1; k < len(phrases); k++ {
				v := newsZh
				for _, p := range []string{phrases[i], phrases[j], phrases[k]} {
					v = strings.Replace(v, p, "", 1)
				}
				variants = append(variants, v)
			}
		}
	}
	distanceSpread(t, newsZh, otherZh, variants, 10)
}

func TestUnrelatedTextsAreFar(t *testing.T) {
	f := mustFingerprinter(t, Options{})
	pairs := [][2]string{{article, unrelatedArticle}, {newsZh, otherZh}}
	for _, p := range pairs {
		if d := Distance(mustFingerprint(t, f, p[0]), mustFingerprint(t, f, p[1])); d < 16 {
			t.Errorf("Distance(%.12q, %.12q) = %d, want >= 16", p[0], p[1], d)
		}
	}
}

func TestNotEnoughContent(t *testing.T) {
	tests := []struct {
		name, text string
		features   int
	}{
		{"empty", "", 0},
		{"only punctuation", " ... !!! ", 0},
		{"only stop words", "the and of to is was", 0},
		{"a short line", "Page not found. Please try again later.", 6},
		{"seven distinct words repeated", strings.Repeat("alpha beta gamma delta epsilon zeta eta ", 20), 7},
	}
	f := mustFingerprinter(t, Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp, n, err := f.Fingerprint(tt.text)
			if !errors.Is(err, ErrNotEnoughContent) || fp != 0 || n != tt.features {
				t.Errorf("Fingerprint(%.20q) = %v, %d, %v; want 0, %d, ErrNotEnoughContent", tt.text, fp, n, err, tt.features)
			}
			if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("%d distinct features", tt.features)) {
				t.Errorf("error %q does not give the count %d", err, tt.features)
			}
		})
	}
	// Eight distinct words are enough by default, and a lower minimum
	// accepts less.
	if _, _, err := f.Fingerprint("alpha beta gamma delta epsilon zeta eta theta"); err != nil {
		t.Errorf("8 distinct words: %v", err)
	}
	if _, _, err := mustFingerprinter(t, Options{MinFeatures: 2}).Fingerprint("Page not found."); err != nil {
		t.Errorf("MinFeatures 2, 2 words: %v", err)
	}
}

// Fingerprint must agree with FromFeatures(Features(text)) for every kind:
// the features `crawl dups show` prints are the ones that were hashed.
func TestFingerprintMatchesFeatures(t *testing.T) {
	for _, s := range []string{"words", "word-shingles:2", "word-shingles:4", "char-shingles:3", "char-shingles:6"} {
		o, err := ParseOptions(s)
		if err != nil {
			t.Fatal(err)
		}
		f := mustFingerprinter(t, o)
		for _, text := range []string{article, newsZh} {
			fp, n, err := f.Fingerprint(text)
			if err != nil {
				t.Fatal(err)
			}
			fs := f.Features(text)
			if got := FromFeatures(fs); got != fp || len(fs) != n {
				t.Errorf("%s %.12q: FromFeatures(Features) = %v with %d features, Fingerprint = %v with %d", s, text, got, len(fs), fp, n)
			}
		}
	}
}

func TestFeatures(t *testing.T) {
	text := "Rivers and rivers and rivers; a bridge over rivers. Bridge!"
	tests := []struct {
		opts string
		want []Feature
	}{
		{"words", []Feature{{"rivers", 1 + math.Log(4)}, {"bridge", 1 + math.Log(2)}}},
		{"word-shingles:2", []Feature{{"rivers bridge", 1 + math.Log(2)}, {"rivers rivers", 1 + math.Log(2)}, {"bridge rivers", 1}}},
		{"word-shingles:9", []Feature{{"rivers rivers rivers bridge rivers bridge", 1}}},
	}
	for _, tt := range tests {
		o, err := ParseOptions(tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := mustFingerprinter(t, o).Features(text); !slices.Equal(got, tt.want) {
			t.Errorf("%s: Features(%q) = %v, want %v", tt.opts, text, got, tt.want)
		}
	}
	// Character shingles slide over the joined token stream, rune by rune.
	f := mustFingerprinter(t, Options{Kind: CharShingles, N: 3, MinFeatures: 1})
	got := f.Features("Über ÖL")
	want := []Feature{{" öl", 1}, {"ber", 1}, {"er ", 1}, {"r ö", 1}, {"übe", 1}}
	if !slices.Equal(got, want) {
		t.Errorf("char-shingles:3: Features(%q) = %v, want %v", "Über ÖL", got, want)
	}
	if got := f.Features("ab"); !slices.Equal(got, []Feature{{"ab", 1}}) {
		t.Errorf("char-shingles:3: Features(%q) = %v, want the whole stream as one shingle", "ab", got)
	}
}

func TestIDFWeights(t *testing.T) {
	idf := map[string]float64{"rivers": 0.5, "bridge": 3}
	f := mustFingerprinter(t, Options{IDF: idf, MinFeatures: 1})
	got := f.Features("rivers rivers bridge ferry")
	want := []Feature{{"bridge", 3}, {"ferry", 3}, {"rivers", 0.5 * (1 + math.Log(2))}}
	if !slices.Equal(got, want) {
		t.Errorf("Features with IDF = %v, want %v (a missing feature gets the largest IDF)", got, want)
	}
	fp, _, err := f.Fingerprint("rivers rivers bridge ferry")
	if err != nil || fp != FromFeatures(want) {
		t.Errorf("Fingerprint with IDF = %v, %v; want %v", fp, err, FromFeatures(want))
	}
}

func TestFromTokens(t *testing.T) {
	f := mustFingerprinter(t, Options{MinFeatures: 2})
	// Tokens are taken as given: no folding, no stop-word removal.
	fp, n, err := f.FromTokens([]string{"The", "the", "", "Cat", "the"})
	want := FromFeatures([]Feature{{"the", 1 + math.Log(2)}, {"The", 1}, {"Cat", 1}})
	if err != nil || n != 3 || fp != want {
		t.Errorf("FromTokens = %v, %d, %v; want %v, 3, nil", fp, n, err, want)
	}
	if _, _, err := f.FromTokens([]string{"one"}); !errors.Is(err, ErrNotEnoughContent) {
		t.Errorf("FromTokens(one token), MinFeatures 2: err = %v, want ErrNotEnoughContent", err)
	}
	// The tokens of a text give that text's fingerprint.
	g := mustFingerprinter(t, Options{Kind: WordShingles, N: 3})
	if a, b := mustFingerprint(t, g, article), fromTokens(t, g, Tokens(article)); a != b {
		t.Errorf("FromTokens(Tokens(article)) = %v, Fingerprint(article) = %v", b, a)
	}
}

func fromTokens(t *testing.T, f *Fingerprinter, tokens []string) Fingerprint {
	t.Helper()
	fp, _, err := f.FromTokens(tokens)
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

// Run with -race: one Fingerprinter shared by goroutines gives every
// goroutine the same answers.
func TestFingerprinterConcurrentUse(t *testing.T) {
	f := mustFingerprinter(t, Options{Kind: WordShingles})
	texts := []string{article, articleRepost, newsZh, unrelatedArticle, "too short"}
	type result struct {
		fp  Fingerprint
		n   int
		err string
	}
	run := func(s string) result {
		fp, n, err := f.Fingerprint(s)
		r := result{fp: fp, n: n}
		if err != nil {
			r.err = err.Error() // "too short" fails, which is an answer too
		}
		return r
	}
	want := make([]result, len(texts))
	for i, s := range texts {
		want[i] = run(s)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for r := range 5 {
				i := (g + r) % len(texts)
				if got := run(texts[i]); got != want[i] {
					t.Errorf("goroutine %d: Fingerprint(%.12q) = %v, want %v", g, texts[i], got, want[i])
				}
			}
		})
	}
	wg.Wait()
}

// hashCounts against a map, across growth and reuse with smaller texts.
func TestHashCounts(t *testing.T) {
	var c hashCounts
	for _, size := range []int{5000, 10, 300} {
		c.reset(8) // deliberately too small: the table must grow
		want := map[uint64]int32{}
		for i := range size {
			h := uint64(i%(size/3+1)) * 0x9e3779b97f4a7c15 // repeats, spread
			c.add(h)
			want[h]++
		}
		got := map[uint64]int32{}
		for i, n := range c.n {
			if n > 0 {
				got[c.keys[i]] = n
			}
		}
		if !maps.Equal(got, want) || c.distinct != len(want) {
			t.Errorf("%d adds: %d distinct counted, want %d (maps equal: %v)", size, c.distinct, len(want), maps.Equal(got, want))
		}
	}
}
