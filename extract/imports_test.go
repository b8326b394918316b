package extract

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// extract is a leaf: no sibling packages, no colly, no network client.
func TestLeafImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(p, "github.com/simcrawl/") || strings.Contains(p, "colly") || p == "net/http" && f != "extract.go" {
				t.Errorf("%s imports %s", f, p)
			}
		}
	}
}

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
