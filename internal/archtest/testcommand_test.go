package archtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The README's test command is what CI runs, word for word: the line of
// the README's first sh block that starts with "go vet" (its comment
// aside) is a line of .ci/run. It carries its own -timeout, so a slow day
// fails no sooner in one than in the other.
func TestREADMETestCommandIsCIs(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	var cmd string
	for _, l := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(l, "go vet ") {
			cmd = l
			if i := strings.Index(l, "   #"); i >= 0 {
				cmd = strings.TrimSpace(l[:i])
			}
			break
		}
	}
	if cmd == "" {
		t.Fatal("README.md has no line starting with `go vet`: the test command")
	}
	if !slices.Contains(strings.Split(string(ci), "\n"), cmd) {
		t.Errorf(".ci/run does not run the README's test command\n%s\nas one of its lines", cmd)
	}
	for _, want := range []string{"-race", "-timeout", "-run '^TestQuality'"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("the test command lacks %s: %s", want, cmd)
		}
	}
	// The TestQuality pass names its packages (linking every package's
	// test binary to run none of its tests cost about 20 CPU-s), so it
	// must name every package that has a TestQuality test.
	_, quality, _ := strings.Cut(cmd, "-run '^TestQuality'")
	named := strings.Fields(quality)
	for _, dir := range qualityTestDirs(t) {
		if !slices.Contains(named, "./"+dir+"/") && !slices.Contains(named, "./...") {
			t.Errorf("the test command's TestQuality pass does not run ./%s/, which has TestQuality tests: %s", dir, cmd)
		}
	}
}

// qualityTestDirs returns the directories (relative to the repository
// root, with slashes) of the test files that declare a TestQuality test.
func qualityTestDirs(t *testing.T) []string {
	t.Helper()
	root := "../.."
	decl := regexp.MustCompile(`(?m)^func TestQuality\w*\(`)
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if decl.Match(b) {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			if rel = filepath.ToSlash(rel); !slices.Contains(dirs, rel) {
				dirs = append(dirs, rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no TestQuality test found: the walk is broken")
	}
	return dirs
}
