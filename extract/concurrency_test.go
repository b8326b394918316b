package extract

import (
	"path/filepath"
	"sync"
	"testing"
)

// Extract keeps no shared mutable state; run with -race.
func TestConcurrentExtract(t *testing.T) {
	seeds, err := filepath.Glob("testdata/*/source.html")
	if err != nil {
		t.Fatal(err)
	}
	var srcs [][]byte
	for _, p := range seeds {
		srcs = append(srcs, goldenSource(t, filepath.Dir(p)))
	}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, src := range srcs {
				if _, err := ExtractBytes(src, "text/html", testURL, Options{}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
}
