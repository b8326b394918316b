package contentseen

import (
	"os"
	"path/filepath"
	"testing"
	"unicode"
)

// corpusTexts returns the crudely de-tagged texts of the corpus pages
// matching pattern (relative to ../shared/corpus), keeping those whose
// share of Han characters is at least minHan and below maxHan. It skips
// the benchmark when the corpus is absent.
func corpusTexts(b *testing.B, pattern string, minHan, maxHan float64) []string {
	b.Helper()
	files, err := filepath.Glob(filepath.Join("../../shared/corpus", pattern))
	if err != nil || len(files) == 0 {
		b.Skip("corpus not found at ../../shared/corpus")
	}
	var texts []string
	for _, name := range files {
		raw, err := os.ReadFile(name)
		if err != nil {
			b.Fatal(err)
		}
		text := stripTags(string(raw))
		han, all := 0, 0
		for _, r := range text {
			all++
			if unicode.Is(unicode.Han, r) {
				han++
			}
		}
		if all > 0 && float64(han)/float64(all) >= minHan && float64(han)/float64(all) < maxHan {
			texts = append(texts, text)
		}
	}
	if len(texts) == 0 {
		b.Skip("no matching corpus texts")
	}
	return texts
}

func benchmarkTexts(b *testing.B, o Options, texts []string) {
	f, err := NewFingerprinter(o)
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
	b.SetBytes(int64(size))
	b.ReportAllocs()
	cpu0, ok := cpuTime()
	for b.Loop() {
		for _, t := range texts {
			if _, _, err := f.Fingerprint(t); err != nil && len(t) > 2000 {
				b.Fatalf("Fingerprint(%.40q): %v", t, err)
			}
		}
	}
	// MB per CPU-second: the per-core figure, independent of how many
	// other jobs share the machine.
	if cpu1, ok1 := cpuTime(); ok && ok1 && cpu1 > cpu0 {
		b.ReportMetric(float64(size)*float64(b.N)/1e6/(cpu1-cpu0).Seconds(), "MB/cpu-s")
	}
}

// BenchmarkFingerprint measures MB/s of text on the corpus: the expected
// (extracted) articles of readability's test pages with no Han text as
// "english" (mostly English, some French, German, Spanish), and the Chinese
// news pages of gne-zh, tags stripped, as "chinese" (their text includes
// navigation and some Latin).
func BenchmarkFingerprint(b *testing.B) {
	kinds := []Options{{}, {Kind: WordShingles}, {Kind: CharShingles}}
	b.Run("lang=english", func(b *testing.B) {
		texts := corpusTexts(b, "readability/*/expected.html", 0, 0.0001)
		for _, o := range kinds {
			b.Run("opts="+o.String(), func(b *testing.B) { benchmarkTexts(b, o, texts) })
		}
	})
	b.Run("lang=chinese", func(b *testing.B) {
		texts := corpusTexts(b, "gne-zh/*/*.html", 0.2, 1.01)
		for _, o := range kinds {
			b.Run("opts="+o.String(), func(b *testing.B) { benchmarkTexts(b, o, texts) })
		}
	})
}

// BenchmarkSegmentGSE is gse's own Segment on the same Chinese texts, for
// comparison with the allocation-free segmenter (lang=chinese above).
func BenchmarkSegmentGSE(b *testing.B) {
	texts := corpusTexts(b, "gne-zh/*/*.html", 0.2, 1.01)
	if err := PreloadChinese(); err != nil {
		b.Fatal(err)
	}
	seg := loadGSE(b)
	var runs [][]byte
	size := 0
	for _, t := range texts {
		for _, r := range hanRuns(t) {
			runs = append(runs, []byte(r))
			size += len(r)
		}
	}
	b.Run("impl=gse", func(b *testing.B) {
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			for _, r := range runs {
				seg.Segment(r)
			}
		}
	})
	b.Run("impl=contentseen", func(b *testing.B) {
		var s scratch
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			for _, r := range runs {
				s.ts.reset()
				if err := s.segmentHan(string(r), false, false); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

func BenchmarkHashFeature(b *testing.B) {
	for b.Loop() {
		HashFeature("riverside")
	}
}

// BenchmarkLoadChinese is the first Han character's cost: reading the
// embedded dictionary (zhdict.bin) into the segmentation table and the
// Traditional-to-Simplified converter. Peak memory of a whole process:
// /usr/bin/time -v on a program that fingerprints one Chinese sentence
// (see the issue 16 note).
func BenchmarkLoadChinese(b *testing.B) {
	b.SetBytes(int64(len(zhData)))
	b.ReportAllocs()
	cpu0, ok := cpuTime()
	for b.Loop() {
		if _, _, err := readZhData(zhData); err != nil {
			b.Fatal(err)
		}
	}
	// CPU time per load: wall time on the shared machine counts the other
	// jobs' time slices too.
	if cpu1, ok1 := cpuTime(); ok && ok1 {
		b.ReportMetric(float64((cpu1-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
	}
}
