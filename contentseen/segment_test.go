package contentseen

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-ego/gse"
)

// Tests keep gse's segmenter after loading so that TestSegmentMatchesGSE
// can compare against it. Every test in this binary shares that one load
// (about 7 s under -race).
func init() { zh.keepGSE = true }

func TestChineseStats(t *testing.T) {
	if err := PreloadChinese(); err != nil {
		t.Fatal(err)
	}
	loaded, took, words := ChineseStats()
	if !loaded || took <= 0 || words < 100_000 {
		t.Errorf("ChineseStats() = %v, %v, %d; want true, > 0, >= 100000 words", loaded, took, words)
	}
}

// The segmenter is gse's algorithm on gse's dictionary, rewritten to avoid
// allocations; the test checks it against gse's own Segment on the
// fixtures and, when the corpus is present, on the Han runs of its
// Chinese pages.
func TestSegmentMatchesGSE(t *testing.T) {
	if err := PreloadChinese(); err != nil {
		t.Fatal(err)
	}
	if zh.gse == nil {
		t.Skip("the dictionary was loaded before keepGSE was set")
	}
	runs := hanRuns(newsZh + otherZh + newsZhTraditional + "臺灣的半導體產業在全球市場佔有重要地位香港特別行政區政府宣佈新的房屋政策")
	if files, err := filepath.Glob("../../shared/corpus/gne-zh/*/*.html"); err == nil {
		limit := 200_000 // bytes of Han text, enough for every site and fast under -race
		for _, name := range files {
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range hanRuns(stripTags(string(b))) {
				if limit -= len(r); limit > 0 {
					runs = append(runs, r)
				}
			}
		}
	}
	var s scratch
	mismatches := 0
	for _, run := range runs {
		s.ts.reset()
		if err := s.segmentHan(run, false); err != nil {
			t.Fatal(err)
		}
		got := tokenStrings(&s)
		want := gse.ToSlice(zh.gse.Segment([]byte(run)))
		if !slices.Equal(got, want) {
			if mismatches++; mismatches <= 5 {
				t.Errorf("segment(%q)\n got %q\nwant %q (gse)", run, got, want)
			}
		}
	}
	t.Logf("%d Han runs compared, %d mismatches", len(runs), mismatches)
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
