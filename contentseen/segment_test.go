package contentseen

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-ego/gse"

	"github.com/simcrawl/simcrawl/contentseen/internal/zhdict"
	"github.com/simcrawl/simcrawl/contentseen/internal/zhdict/zhsource"
)

var updateZh = flag.Bool("update-zh", false, "rewrite testdata/zh-segment.golden from gse (TestQualitySegmentMatchesGSE)")

// gseOnce loads gse's dictionary for the tests that compare against gse
// itself: about 1.5 s and 300 MB of allocations (7 s under -race), so
// only TestQuality tests, which skip under -race, use it.
var gseOnce struct {
	sync.Once
	seg *gse.Segmenter
	err error
}

func loadGSE(t testing.TB) *gse.Segmenter {
	t.Helper()
	if raceEnabledSegment {
		t.Skip("loads gse's text dictionary: too slow under -race; CI runs it in the TestQuality pass")
	}
	gseOnce.Do(func() { gseOnce.seg, gseOnce.err = zhsource.LoadGSE() })
	if gseOnce.err != nil {
		t.Fatal(gseOnce.err)
	}
	return gseOnce.seg
}

func TestChineseStats(t *testing.T) {
	if err := PreloadChinese(); err != nil {
		t.Fatal(err)
	}
	loaded, took, words := ChineseStats()
	if !loaded || took <= 0 || words < 100_000 {
		t.Errorf("ChineseStats() = %v, %v, %d; want true, > 0, >= 100000 words", loaded, took, words)
	}
}

// readZhData inserts every word with its cost and every proper prefix as
// a prefix, once, also where a word shares only part of a rune's bytes
// with the word before it (人 after 中国人).
func TestReadZhData(t *testing.T) {
	words := []zhdict.Word{{Text: "中国人", Cost: 12.5}, {Text: "中国", Cost: 9.25}, {Text: "人", Cost: 7}, {Text: "人民", Cost: 11}, {Text: "國家安全", Cost: 15}}
	b, err := zhdict.Encode(&zhdict.Data{Words: words, Tables: [][]zhdict.Pair{{{From: "國", To: "国"}}}})
	if err != nil {
		t.Fatal(err)
	}
	d, conv, err := readZhData(string(b))
	if err != nil {
		t.Fatal(err)
	}
	hash := func(s string) uint64 {
		h := uint64(runeHashSeed)
		for _, r := range s {
			h = runeHash(h, r)
		}
		return h
	}
	for _, tt := range []struct {
		s    string
		cost float32
		ok   bool
	}{
		{"中国人", 12.5, true}, {"中国", 9.25, true}, {"人", 7, true}, {"人民", 11, true}, {"國家安全", 15, true},
		{"中", -1, true}, {"國", -1, true}, {"國家", -1, true}, {"國家安", -1, true},
		{"民", 0, false}, {"国", 0, false}, {"中国人民", 0, false},
	} {
		cost, ok := d.lookup(hash(tt.s))
		if ok != tt.ok || cost != tt.cost {
			t.Errorf("lookup(%q) = %v, %v; want %v, %v", tt.s, cost, ok, tt.cost, tt.ok)
		}
	}
	if d.nWords != len(words) || d.maxRune != 4 {
		t.Errorf("nWords %d, maxRune %d; want %d, 4", d.nWords, d.maxRune, len(words))
	}
	if d.first['中'-zhFirstLo] != -1 || d.first['人'-zhFirstLo] != 7 || d.first['民'-zhFirstLo] != 0 {
		t.Errorf("first-rune table: 中 %v, 人 %v, 民 %v; want -1, 7, 0", d.first['中'-zhFirstLo], d.first['人'-zhFirstLo], d.first['民'-zhFirstLo])
	}
	for _, s := range []string{"中国", "人民", "國家", "國家安"} {
		if !d.mayHaveShort(hash(s)) {
			t.Errorf("the short filter lacks %q", s)
		}
	}
	var offs []int32
	if got, _ := conv.convert("國家", nil, &offs); got != "国家" {
		t.Errorf("convert(國家) = %q, want 国家", got)
	}
}

// zhFixtureRuns are the Han runs of the Chinese fixtures.
func zhFixtureRuns() []string {
	return hanRuns(newsZh + otherZh + newsZhTraditional + "臺灣的半導體產業在全球市場佔有重要地位香港特別行政區政府宣佈新的房屋政策")
}

// segmentRun segments one Han run with the embedded dictionary (no
// conversion, stop words kept).
func segmentRun(t testing.TB, s *scratch, run string) []string {
	s.ts.reset()
	if err := s.segmentHan(run, false, false); err != nil {
		t.Fatal(err)
	}
	return tokenStrings(s)
}

// TestSegmentGolden checks the segmenter against gse's words for the
// fixtures, recorded in testdata/zh-segment.golden (one run per line, its
// words separated by spaces) by TestQualitySegmentMatchesGSE -update-zh,
// which also checks that the file is what gse gives today. It needs no
// gse, so it runs under -race too.
func TestSegmentGolden(t *testing.T) {
	b, err := os.ReadFile("testdata/zh-segment.golden")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	runs := zhFixtureRuns()
	if len(lines) != len(runs) {
		t.Fatalf("golden file has %d lines, the fixtures %d Han runs: run TestQualitySegmentMatchesGSE with -update-zh", len(lines), len(runs))
	}
	var s scratch
	for i, run := range runs {
		want := strings.Fields(lines[i])
		if strings.Join(want, "") != run {
			t.Fatalf("golden line %d is not the fixture run %q: run TestQualitySegmentMatchesGSE with -update-zh", i+1, run)
		}
		if got := segmentRun(t, &s, run); !slices.Equal(got, want) {
			t.Errorf("segment(%q)\n got %q\nwant %q (gse, golden)", run, got, want)
		}
	}
}

// TestQualitySegmentMatchesGSE checks the segmenter, on the embedded
// dictionary, against gse's own Segment on gse's dictionary: every Han run
// of the fixtures and of the gne-zh corpus must give the same words.
func TestQualitySegmentMatchesGSE(t *testing.T) {
	seg := loadGSE(t)
	fixtures := zhFixtureRuns()
	var golden bytes.Buffer
	for _, run := range fixtures {
		golden.WriteString(strings.Join(gse.ToSlice(seg.Segment([]byte(run))), " "))
		golden.WriteByte('\n')
	}
	if *updateZh {
		if err := os.WriteFile("testdata/zh-segment.golden", golden.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	} else if b, err := os.ReadFile("testdata/zh-segment.golden"); err != nil || !bytes.Equal(b, golden.Bytes()) {
		t.Errorf("testdata/zh-segment.golden is not gse's segmentation of the fixtures (err %v): rerun with -update-zh", err)
	}
	runs := slices.Clone(fixtures)
	files, _ := filepath.Glob("../../shared/corpus/gne-zh/*/*.html")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, hanRuns(stripTags(string(b)))...)
	}
	var s scratch
	mismatches, size := 0, 0
	for _, run := range runs {
		size += len(run)
		got := segmentRun(t, &s, run)
		want := gse.ToSlice(seg.Segment([]byte(run)))
		if !slices.Equal(got, want) {
			if mismatches++; mismatches <= 5 {
				t.Errorf("segment(%q)\n got %q\nwant %q (gse)", run, got, want)
			}
		}
	}
	t.Logf("%d Han runs (%d bytes, %d corpus files) compared, %d mismatches", len(runs), size, len(files), mismatches)
}

// TestQualityZhDataUpToDate checks that the embedded zhdict.bin is what
// `go generate` writes from gse's dictionary and the OpenCC tables today.
func TestQualityZhDataUpToDate(t *testing.T) {
	seg := loadGSE(t)
	want, err := zhsource.BuildFrom(seg)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal([]byte(zhData), want) {
		t.Errorf("zhdict.bin (%d bytes) differs from what zhgen writes (%d bytes): run go generate ./contentseen/", len(zhData), len(want))
	}
}

func hanRuns(s string) []string {
	var runs []string
	start := -1
	for i, r := range s + "." {
		if isHan(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			runs = append(runs, s[start:i])
			start = -1
		}
	}
	return runs
}

var tagRE = regexp.MustCompile(`(?is)<script.*?</script>|<style.*?</style>|<[^>]*>`)

// stripTags reduces HTML to its text, crudely: enough for benchmarks and
// segmentation tests, not for extraction.
func stripTags(html string) string {
	return strings.Join(strings.Fields(tagRE.ReplaceAllString(html, " ")), " ")
}
