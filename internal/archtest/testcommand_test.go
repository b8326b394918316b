package archtest

import (
	"os"
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
}
