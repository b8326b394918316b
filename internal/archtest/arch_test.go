package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// leaves may import the standard library and their own few third-party
// modules (import path prefixes), never a package of this module and never
// colly: each stays usable and testable alone.
var leaves = map[string][]string{
	// x/sys/unix: madvise and fadvise on bbolt's mapping (bbolt uses it too).
	"contentseen": {"github.com/go-ego/gse", "github.com/zeebo/xxh3", "go.etcd.io/bbolt", "golang.org/x/sys/unix", "golang.org/x/text/"},
	"extract": {"codeberg.org/readeck/go-readability/v2", "github.com/PuerkitoBio/goquery",
		"golang.org/x/net/html", "golang.org/x/text/"},
	"frontier": {"github.com/nlnwa/whatwg-url/", "go.etcd.io/bbolt"},
	"storage":  {"github.com/klauspost/compress/zstd", "go.etcd.io/bbolt"},
	"warc":     {}, // the standard library alone: any tool can read our archives
}

type pkg struct {
	dir     string
	hasDoc  bool
	imports map[string]bool // of non-test files
}

func loadPackages(t *testing.T) map[string]*pkg {
	t.Helper()
	root := "../.."
	pkgs := map[string]*pkg{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		p := pkgs[rel]
		if p == nil {
			p = &pkg{dir: rel, imports: map[string]bool{}}
			pkgs[rel] = p
		}
		if f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != "" {
			p.hasDoc = true
		}
		for _, imp := range f.Imports {
			p.imports[strings.Trim(imp.Path.Value, `"`)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal("not at the module root:", err)
	}
	return pkgs
}

func TestEveryPackageHasADoc(t *testing.T) {
	for dir, p := range loadPackages(t) {
		if !p.hasDoc {
			t.Errorf("package %s has no package doc comment", dir)
		}
	}
}

func TestOnlyCrawlerImportsColly(t *testing.T) {
	for dir, p := range loadPackages(t) {
		for imp := range p.imports {
			if strings.HasPrefix(imp, "github.com/gocolly/colly") && dir != "crawler" {
				t.Errorf("%s imports %s: only crawler may import colly", dir, imp)
			}
		}
	}
}

func TestLeavesImportOnlyTheirOwnDependencies(t *testing.T) {
	pkgs := loadPackages(t)
	for leaf, allowed := range leaves {
		p := pkgs[leaf]
		if p == nil {
			t.Errorf("leaf package %s not found", leaf)
			continue
		}
		for imp := range p.imports {
			first, _, _ := strings.Cut(imp, "/")
			if !strings.Contains(first, ".") {
				continue // standard library
			}
			if strings.HasPrefix(imp, "github.com/simcrawl/simcrawl/"+leaf+"/internal/") {
				continue // the leaf's own internal packages (contentseen's generated-data format)
			}
			ok := false
			for _, a := range allowed {
				ok = ok || imp == a || strings.HasPrefix(imp, a)
			}
			if !ok {
				t.Errorf("leaf %s imports %s; allowed: the standard library and %v", leaf, imp, allowed)
			}
		}
	}
}

// Every library package shows its use in a runnable example (go vet checks
// that examples name real identifiers; go test runs them).
func TestEveryLibraryPackageHasAnExample(t *testing.T) {
	for _, dir := range []string{"contentseen", "crawler", "extract", "frontier", "storage", "warc"} {
		files, err := filepath.Glob(filepath.Join("../..", dir, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), "\nfunc Example") && strings.Contains(string(b), "// Output:") {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("package %s has no runnable example (func Example... with // Output:)", dir)
		}
	}
}
