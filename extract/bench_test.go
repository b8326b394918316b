package extract

import (
	"net/url"
	"os"
	"path/filepath"
	"testing"
)

// corpusPages loads every page of the shared corpus (readability sources
// and gne-zh) into memory.
func corpusPages(tb testing.TB) [][]byte {
	var pages [][]byte
	for _, c := range readabilityCases(tb) {
		b, err := os.ReadFile(filepath.Join(corpusDir, "readability", c, "source.html"))
		if err != nil {
			tb.Fatal(err)
		}
		pages = append(pages, b)
	}
	for _, p := range gnePages(tb) {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		pages = append(pages, b)
	}
	return pages
}

// BenchmarkExtractCorpus runs the whole stage (decode, parse, links,
// cleaning, readability, text, normalisation) over the corpus; one
// iteration is the whole corpus, pages/s is reported per benchmark CPU.
func BenchmarkExtractCorpus(b *testing.B) {
	pages := corpusPages(b)
	var size int64
	for _, p := range pages {
		size += int64(len(p))
	}
	u, _ := url.Parse("http://fakehost/test/page.html")
	b.SetBytes(size)
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		for _, p := range pages {
			if _, err := ExtractBytes(p, "text/html", u, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(pages))*float64(b.N)/b.Elapsed().Seconds(), "pages/s")
	if cpu := (cpuTime() - cpu0).Seconds(); cpu > 0 {
		// Includes the garbage collector's work on other threads.
		b.ReportMetric(float64(len(pages))*float64(b.N)/cpu, "pages/cpu-s")
		b.ReportMetric(float64(size)*float64(b.N)/1e6/cpu, "MB/cpu-s")
	}
}
