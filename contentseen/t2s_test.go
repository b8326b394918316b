package contentseen

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/longbridgeapp/opencc"
)

func newOpenCC(t testing.TB, conversion string) *opencc.OpenCC {
	t.Helper()
	cc, err := opencc.New(conversion)
	if err != nil {
		t.Fatal(err)
	}
	return cc
}

func libConvert(t testing.TB, cc *opencc.OpenCC, s string) string {
	t.Helper()
	out, err := cc.Convert(s)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func ourT2S(t testing.TB, run string) string {
	t.Helper()
	_, conv, err := loadChinese()
	if err != nil {
		t.Fatal(err)
	}
	var offs []int32
	out, _ := conv.convert(run, nil, &offs)
	return out
}

// compareT2S checks the converter against the library's t2s on every Han
// run of texts and returns the number of runs and mismatches.
func compareT2S(t *testing.T, lib *opencc.OpenCC, texts []string) (runs, mismatches int) {
	t.Helper()
	for _, text := range texts {
		for _, run := range hanRuns(text) {
			runs++
			if got, want := ourT2S(t, run), libConvert(t, lib, run); got != want {
				if mismatches++; mismatches <= 5 {
					t.Errorf("t2s(%q) = %q, opencc gives %q", run, got, want)
				}
			}
		}
	}
	return runs, mismatches
}

// The converter runs OpenCC's t2s tables as github.com/longbridgeapp/opencc
// does; its output must be the library's, on Traditional text (phrases
// such as 乾隆 that keep 乾 included) and on Simplified text (left as it is).
func TestT2SMatchesOpenCC(t *testing.T) {
	lib := newOpenCC(t, "t2s")
	texts := []string{newsZh, otherZh, newsZhTraditional,
		"臺灣的半導體產業在全球市場佔有重要地位", "乾隆皇帝的乾清宮", "乾乾淨淨的衣服晾乾了", "一目瞭然", "著作權與著名的著陸",
		"香港特別行政區政府宣佈新的房屋政策", "於是他們開始討論關於發展的問題", "髮型與發展", "瞭望台上的鐘錶"}
	runs, mismatches := compareT2S(t, lib, texts)
	if runs < 20 || mismatches > 0 {
		t.Errorf("%d runs, %d mismatches", runs, mismatches)
	}
	if got := ourT2S(t, "乾隆"); got != "乾隆" {
		t.Errorf("t2s(乾隆) = %q: the phrase table must keep it", got)
	}
	if got := ourT2S(t, "乾淨"); got != "干净" {
		t.Errorf("t2s(乾淨) = %q, want 干净", got)
	}
}

// TestQualityTraditionalIsCopy converts the Chinese pages of the corpus to
// Traditional script with OpenCC (s2t, s2tw), checks the converter
// against the library on them, and checks that a page and its Traditional
// version get identical or near fingerprints with tokenizer 2 (with
// tokenizer 1 they are unrelated: logged for comparison).
func TestQualityTraditionalIsCopy(t *testing.T) {
	if raceEnabledSegment {
		t.Skip("the corpus through OpenCC's s2t is slow under -race; CI runs it in the TestQuality pass")
	}
	files, _ := filepath.Glob("../../shared/corpus/gne-zh/*/*.html")
	if len(files) == 0 {
		t.Skip("corpus not found at ../../shared/corpus")
	}
	lib := newOpenCC(t, "t2s")
	v2 := mustFingerprinter(t, Options{})
	v1 := mustFingerprinter(t, Options{Tokenizer: Tokenizer1})
	var d1, d2 []int
	for _, conversion := range []string{"s2t", "s2tw"} {
		to := newOpenCC(t, conversion)
		for _, name := range files {
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			text := stripTags(string(b))
			trad := libConvert(t, to, text)
			if _, mismatches := compareT2S(t, lib, []string{text, trad}); mismatches > 0 {
				t.Errorf("%s (%s): %d runs differ from opencc's t2s", name, conversion, mismatches)
			}
			a, _, err := v2.Fingerprint(text)
			if err != nil {
				continue
			}
			d2 = append(d2, Distance(a, mustFingerprint(t, v2, trad)))
			if a1, _, err := v1.Fingerprint(text); err == nil {
				if b1, _, err := v1.Fingerprint(trad); err == nil {
					d1 = append(d1, Distance(a1, b1))
				}
			}
		}
	}
	slices.Sort(d1)
	slices.Sort(d2)
	t.Logf("%d page pairs, Simplified vs Traditional: tokenizer 2 distances %v; tokenizer 1 %v", len(d2), d2, d1)
	if len(d2) == 0 || d2[len(d2)/2] > 0 || d2[len(d2)*9/10] > 3 {
		t.Errorf("tokenizer 2: want median distance 0 and 90th percentile at most 3")
	}
}
