package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/simcrawl/simcrawl/internal/demosite"
)

// crawl distance prints the judge's own measures, the SimHash distance
// and the sketch's similarity and containment, with the crawl's verdict
// at the default settings; the share of SimHash bits agreeing, which is
// no similarity of the texts, is labelled as what it is.
func TestDistancePrintsTheJudgesMeasures(t *testing.T) {
	dir := t.TempDir()
	words := demosite.Words(1, 400)
	edited := append([]string(nil), words...)
	for i := 0; i < len(edited); i += 50 {
		edited[i] = "changed"
	}
	orig := writeFile(t, dir, "orig.txt", strings.Join(words, " "))
	near := writeFile(t, dir, "near.txt", strings.Join(edited, " "))
	other := writeFile(t, dir, "other.txt", strings.Join(demosite.Words(2, 400), " "))
	line := regexp.MustCompile(`^distance (\d+)  similarity ([0-9.]+)  containment ([0-9.]+)  size ratio ([0-9.]+)  bits agreeing ([0-9.]+)  \(`)
	for _, c := range []struct {
		name, a, b, verdict string
		copies              bool
	}{
		{"same text", orig, orig, "copies (exact)", true},
		{"a few words edited", orig, near, "copies (near)", true},
		{"another text", orig, other, "not copies", false},
	} {
		out, _, err := run(t, "", "distance", c.a, c.b)
		if err != nil {
			t.Fatalf("%s: distance: %v", c.name, err)
		}
		m := line.FindStringSubmatch(out)
		if m == nil {
			t.Errorf("%s: no \"distance N  similarity S  containment C  size ratio R  bits agreeing B\" line:\n%s", c.name, out)
			continue
		}
		d, _ := strconv.Atoi(m[1])
		sim, _ := strconv.ParseFloat(m[2], 64)
		bits, _ := strconv.ParseFloat(m[5], 64)
		if want := 1 - float64(d)/64; bits < want-0.001 || bits > want+0.001 {
			t.Errorf("%s: bits agreeing %.3f at distance %d, want %.3f", c.name, bits, d, want)
		}
		if !strings.Contains(out, "\n"+c.verdict) {
			t.Errorf("%s: want the verdict %q:\n%s", c.name, c.verdict, out)
		}
		if !c.copies && sim >= 0.6 {
			t.Errorf("%s: similarity %.3f of two unrelated texts", c.name, sim)
		}
		t.Logf("%s: %s", c.name, out)
	}
}
