package frontier

import (
	goparser "go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the package a leaf: the standard library, bbolt and
// whatwg-url only; never colly and never a sibling package.
func TestImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	allowed := []string{"go.etcd.io/bbolt", "github.com/nlnwa/whatwg-url/"}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := goparser.ParseFile(token.NewFileSet(), name, nil, goparser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(path, "/")
			if !strings.Contains(first, ".") {
				continue // standard library
			}
			ok := false
			for _, a := range allowed {
				if path == a || strings.HasPrefix(path, a) {
					ok = true
				}
			}
			if !ok {
				t.Errorf("%s imports %s; frontier may import only the standard library, bbolt and whatwg-url", name, path)
			}
		}
	}
}
