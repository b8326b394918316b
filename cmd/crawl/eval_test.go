package main

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/crawler"
)

// evalJSON runs crawl eval --json with args and decodes its report.
func evalJSON(t *testing.T, args ...string) evalReport {
	t.Helper()
	out, _, err := run(t, "", append([]string{"eval", "--json"}, args...)...)
	if err != nil {
		t.Fatalf("eval %v: %v", args, err)
	}
	var rep evalReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("eval --json output: %v\n%s", err, out)
	}
	return rep
}

// checkInvariants checks what must hold of any report, whatever the data.
func checkInvariants(t *testing.T, rep evalReport) {
	t.Helper()
	if rep.Duplicates+rep.NonDuplicates != rep.Pairs {
		t.Errorf("duplicates %d + non_duplicates %d != pairs %d", rep.Duplicates, rep.NonDuplicates, rep.Pairs)
	}
	for _, o := range rep.Options {
		if o.Judged+o.TooShort != rep.Pairs {
			t.Errorf("%s: judged %d + too_short %d != pairs %d", o.Features, o.Judged, o.TooShort, rep.Pairs)
		}
		if len(o.TooShortLines) != o.TooShort || len(o.PairResults) != rep.Pairs {
			t.Errorf("%s: %d too_short_lines, %d pair results; want %d and %d", o.Features, len(o.TooShortLines), len(o.PairResults), o.TooShort, rep.Pairs)
		}
		if len(o.Rows) != evalMaxK+1 {
			t.Fatalf("%s: %d rows, want k = 0..%d", o.Features, len(o.Rows), evalMaxK)
		}
		var bestF1 float64
		for i, r := range o.Rows {
			if r.K != i {
				t.Errorf("%s: row %d has k=%d", o.Features, i, r.K)
			}
			if n := r.TP + r.FP + r.FN + r.TN; n != o.Judged {
				t.Errorf("%s k=%d: counts add up to %d, want judged %d", o.Features, r.K, n, o.Judged)
			}
			if i > 0 {
				prev := o.Rows[i-1]
				// A larger k only turns "distinct" predictions into "duplicate" ones.
				if r.TP < prev.TP || r.FP < prev.FP || r.TP+r.FN != prev.TP+prev.FN {
					t.Errorf("%s k=%d: TP %d FP %d FN %d after TP %d FP %d FN %d: not monotone", o.Features, r.K, r.TP, r.FP, r.FN, prev.TP, prev.FP, prev.FN)
				}
			}
			if r.Precision != nil && r.Recall != nil && *r.Precision+*r.Recall > 0 {
				// F1 as the harmonic mean, a different formula from the command's.
				want := 2 * *r.Precision * *r.Recall / (*r.Precision + *r.Recall)
				if r.F1 == nil || math.Abs(*r.F1-want) > 1e-9 {
					t.Errorf("%s k=%d: F1 %v, want %.6f", o.Features, r.K, r.F1, want)
				}
			}
			if r.F1 != nil && *r.F1 > bestF1 {
				bestF1 = *r.F1
			}
		}
		if o.BestK == nil {
			if bestF1 > 0 {
				t.Errorf("%s: no best k although F1 reaches %.3f", o.Features, bestF1)
			}
			continue
		}
		best := o.Rows[*o.BestK]
		if best.F1 == nil || *best.F1 != bestF1 {
			t.Errorf("%s: best k=%d has F1 %v, the highest is %.3f", o.Features, *o.BestK, best.F1, bestF1)
		}
		for _, r := range o.Rows[:*o.BestK] {
			if r.F1 != nil && *r.F1 == bestF1 {
				t.Errorf("%s: best k=%d, but the smaller k=%d has the same F1", o.Features, *o.BestK, r.K)
			}
		}
	}
}

func TestEvalExample(t *testing.T) {
	pairs := filepath.Join("testdata", "pairs", "example.jsonl")
	rep := evalJSON(t, "--pairs", pairs)
	if rep.Pairs < 20 || rep.Duplicates == 0 || rep.NonDuplicates == 0 {
		t.Fatalf("example: %d pairs, %d duplicates, %d not; want a labelled mix of at least 20", rep.Pairs, rep.Duplicates, rep.NonDuplicates)
	}
	var specs []string
	for _, o := range rep.Options {
		specs = append(specs, o.Features)
	}
	if !slices.Equal(specs, evalDefaultFeatures) {
		t.Errorf("options %v, want the defaults %v", specs, evalDefaultFeatures)
	}
	checkInvariants(t, rep)
	for _, o := range rep.Options {
		// The example's last two lines are deliberately too short.
		if !slices.Contains(o.TooShortLines, rep.Pairs-1) || !slices.Contains(o.TooShortLines, rep.Pairs) {
			t.Errorf("%s: too_short_lines %v lack the example's two thin pairs", o.Features, o.TooShortLines)
		}
		// At k=0 only identical fingerprints count: no distinct pages in the
		// example have one.
		if p := o.Rows[0].Precision; p != nil && *p != 1 {
			t.Errorf("%s: precision at k=0 is %.3f, want 1 or no predictions", o.Features, *p)
		}
		// The seed material's lesson: recall grows with k, and the labelled
		// copies are not all within k=0.
		first, last := o.Rows[0], o.Rows[evalMaxK]
		if *last.Recall <= *first.Recall {
			t.Errorf("%s: recall %.3f at k=0 and %.3f at k=%d: want it to grow", o.Features, *first.Recall, *last.Recall, evalMaxK)
		}
		if o.BestK == nil || *o.BestK == 0 {
			t.Errorf("%s: best k %v, want one above 0", o.Features, o.BestK)
		}
	}

	out, _, err := run(t, "", "eval", "--pairs", pairs, "--features", "words")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"features words", "precision", "<- best", "too short to fingerprint", "false negatives"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// One best mark per table: distance alone, and the two-stage rule.
	if n := strings.Count(out, "<- best"); n != 2 {
		t.Errorf("one option, %d best marks:\n%s", n, out)
	}
	if !strings.Contains(out, "two-stage rule (the crawler's)") {
		t.Errorf("no two-stage table:\n%s", out)
	}
	// Verification only removes false positives: at every k the two-stage
	// rule has no more of them than distance alone, and on the example
	// none at all.
	for _, o := range rep.Options {
		if len(o.JudgeRows) != len(o.Rows) || o.BestJudgeK == nil {
			t.Fatalf("%s: %d judge rows, best %v", o.Features, len(o.JudgeRows), o.BestJudgeK)
		}
		for i, r := range o.JudgeRows {
			if r.FP > o.Rows[i].FP || r.FP != 0 {
				t.Errorf("%s k=%d: two-stage rule %d false positives, distance alone %d; want 0", o.Features, r.K, r.FP, o.Rows[i].FP)
			}
		}
	}
}

// TestEvalTwoStage checks the two-stage rule's counts on pairs built to
// tell it from distance alone: the same words in another order (one
// fingerprint, other shingles: not a copy) and a copy that differs in
// punctuation only (exact).
func TestEvalTwoStage(t *testing.T) {
	dir := t.TempDir()
	text := "The swimming pool on Castle Road closes for two weeks from the fifth of May while the changing rooms are rebuilt and the old boiler is replaced by a heat pump."
	ws := strings.Fields(strings.TrimSuffix(text, "."))
	slices.Reverse(ws)
	reversed := strings.Join(ws, " ") + "."
	punct := strings.ReplaceAll(text, " the ", " the, ")
	var lines []string
	for _, p := range []struct {
		a, b string
		dup  bool
	}{{text, reversed, false}, {text, punct, true}} {
		b, err := json.Marshal(map[string]any{"a": p.a, "b": p.b, "duplicate": p.dup})
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	writeFile(t, dir, "pairs.jsonl", strings.Join(lines, "\n")+"\n")
	rep := evalJSON(t, "--pairs", filepath.Join(dir, "pairs.jsonl"), "--features", "words")
	checkInvariants(t, rep)
	o := rep.Options[0]
	rev, pun := o.PairResults[0], o.PairResults[1]
	if rev.Distance == nil || *rev.Distance != 0 || rev.Exact || *rev.Similarity > 0.2 {
		t.Errorf("reversed words: %+v, want distance 0, not exact, similarity near 0", rev)
	}
	if !pun.Exact || *pun.Similarity != 1 {
		t.Errorf("punctuation only: exact %v, similarity %v; want exact, 1", pun.Exact, *pun.Similarity)
	}
	if r := o.Rows[0]; r.TP != 1 || r.FP != 1 {
		t.Errorf("distance <= 0: TP %d FP %d, want 1 1", r.TP, r.FP)
	}
	if r := o.JudgeRows[0]; r.TP != 1 || r.FP != 0 || r.TN != 1 {
		t.Errorf("two-stage at k=0: TP %d FP %d TN %d, want 1 0 1", r.TP, r.FP, r.TN)
	}
	if rep.Thresholds.Similarity != contentseen.DefaultMinSimilarity {
		t.Errorf("thresholds %+v, want the defaults", rep.Thresholds)
	}
	if _, _, err := run(t, "", "eval", "--pairs", filepath.Join(dir, "pairs.jsonl"), "--similarity", "1.5"); err == nil {
		t.Error("eval --similarity 1.5 succeeded")
	}
}

// The example's pairs are short texts (150 to 250 words): with the
// default short radius the two-stage rule looks 11 bits far for them at
// every k, and finds more copies at k=7 than with no short radius, with no
// false positive either way.
func TestEvalShortRadius(t *testing.T) {
	pairs := filepath.Join("testdata", "pairs", "example.jsonl")
	def := evalJSON(t, "--pairs", pairs, "--features", "words")
	off := evalJSON(t, "--pairs", pairs, "--features", "words", "--short-features", "0")
	if th := def.Thresholds; th.ShortK != crawler.DefaultShortK || th.ShortFeatures != crawler.DefaultShortFeatures {
		t.Errorf("thresholds %+v, want short_k %d, short_features %d", th, crawler.DefaultShortK, crawler.DefaultShortFeatures)
	}
	short := 0
	for _, p := range def.Options[0].PairResults {
		if p.Short {
			short++
		}
	}
	if short != def.Options[0].Judged {
		t.Errorf("%d of %d judged pairs short, want all", short, def.Options[0].Judged)
	}
	// The table's heading says the radius it used.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "within k bits (the larger of k and 11 for a pair with a side under 300 features)"},
		{[]string{"--short-features", "0"}, "within k bits (no pair is short: --short-features 0)"},
	} {
		out, _, err := run(t, "", append([]string{"eval", "--pairs", pairs, "--features", "words"}, tc.args...)...)
		if err != nil || !strings.Contains(out, tc.want) {
			t.Errorf("eval %q: err %v, want the heading to say %q:\n%s", tc.args, err, tc.want, out)
		}
	}
	d, o := def.Options[0].JudgeRows[7], off.Options[0].JudgeRows[7]
	if d.TP <= o.TP || d.FP != 0 || o.FP != 0 {
		t.Errorf("k=7: short radius TP %d FP %d, none TP %d FP %d; want more copies found and no false positive", d.TP, d.FP, o.TP, o.FP)
	}
	if _, _, err := run(t, "", "eval", "--pairs", pairs, "--short-k", "65"); err == nil {
		t.Error("eval --short-k 65 succeeded")
	}
}

// TestEvalCounts checks the command's counts against distances computed
// here with the same Fingerprinter, on a pair file in every form a line can
// take (inline text, path relative to the pairs file, a_file, HTML).
func TestEvalCounts(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("testdata", "pairs", "texts")
	abs, err := filepath.Abs(src)
	if err != nil {
		t.Fatal(err)
	}
	swim := "The swimming pool on Castle Road closes for two weeks from the fifth of May while the changing rooms are rebuilt and the old boiler is replaced."
	swimEdited := "The swimming pool on Castle Road closes for two weeks from the 5th of May while the changing rooms are rebuilt and the boiler is replaced."
	writeFile(t, dir, "page.html", "<!doctype html><html><head><title>Pool</title></head><body><nav><a href=/>Home</a></nav><article><h1>Pool closes</h1><p>"+swim+"</p></article></body></html>")
	writeFile(t, dir, "swim.txt", swim)
	lines := []struct {
		json string
		a, b string // for the oracle: paths or texts
		dup  bool
	}{
		{fmt.Sprintf(`{"a": %q, "b": %q, "duplicate": true}`, swim, swimEdited), swim, swimEdited, true},
		{`{"a": "swim.txt", "b": "page.html", "duplicate": true}`, "@" + filepath.Join(dir, "swim.txt"), "@" + filepath.Join(dir, "page.html"), true},
		{fmt.Sprintf(`{"a_file": %q, "b_file": %q, "duplicate": true}`, filepath.Join(abs, "library.txt"), filepath.Join(abs, "library-short.txt")),
			"@" + filepath.Join(abs, "library.txt"), "@" + filepath.Join(abs, "library-short.txt"), true},
		{fmt.Sprintf(`{"a_file": %q, "b": %q, "duplicate": false}`, filepath.Join(abs, "bus-route-7.txt"), filepath.Join(abs, "bus-route-12.txt")),
			"@" + filepath.Join(abs, "bus-route-7.txt"), "@" + filepath.Join(abs, "bus-route-12.txt"), false},
		{fmt.Sprintf(`{"a_file": %q, "b_file": %q, "duplicate": false, "note": "extra fields are ignored"}`, filepath.Join(abs, "soup.txt"), filepath.Join(abs, "trail.txt")),
			"@" + filepath.Join(abs, "soup.txt"), "@" + filepath.Join(abs, "trail.txt"), false},
		{fmt.Sprintf(`{"a": %q, "b": %q, "duplicate": false}`, swim, swimEdited), swim, swimEdited, false},
		// The same text as a file and inline, labelled distinct: a false
		// positive at every k.
		{fmt.Sprintf(`{"a": "swim.txt", "b": %q, "duplicate": false}`, swim), "@" + filepath.Join(dir, "swim.txt"), swim, false},
	}
	var file strings.Builder
	for i, l := range lines {
		file.WriteString(l.json + "\n")
		if i == 2 {
			file.WriteString("\n") // blank lines are skipped but still numbered
		}
	}
	pairs := writeFile(t, dir, "pairs.jsonl", file.String())

	const spec = "char-shingles:4"
	f, err := newFingerprinter(spec)
	if err != nil {
		t.Fatal(err)
	}
	m := &Main{}
	text := func(s string) string {
		p, ok := strings.CutPrefix(s, "@")
		if !ok {
			return s
		}
		txt, err := m.readText(p)
		if err != nil {
			t.Fatal(err)
		}
		return txt
	}
	dists := make([]int, len(lines))
	for i, l := range lines {
		fa, _, err := f.Fingerprint(text(l.a))
		if err != nil {
			t.Fatalf("line %d a: %v", i+1, err)
		}
		fb, _, err := f.Fingerprint(text(l.b))
		if err != nil {
			t.Fatalf("line %d b: %v", i+1, err)
		}
		dists[i] = contentseen.Distance(fa, fb)
	}
	t.Logf("distances: %v", dists)

	rep := evalJSON(t, "--pairs", pairs, "--features", spec)
	checkInvariants(t, rep)
	if len(rep.Options) != 1 || rep.Pairs != len(lines) || rep.Duplicates != 3 {
		t.Fatalf("report: %d options, %d pairs, %d duplicates; want 1, %d, 3", len(rep.Options), rep.Pairs, rep.Duplicates, len(lines))
	}
	o := rep.Options[0]
	for i, p := range o.PairResults {
		wantLine := i + 1
		if i > 2 {
			wantLine++ // after the blank line
		}
		if p.Line != wantLine || p.Distance == nil || *p.Distance != dists[i] {
			t.Errorf("pair %d: line %d distance %v, want line %d distance %d", i, p.Line, p.Distance, wantLine, dists[i])
		}
	}
	for _, r := range o.Rows {
		var tp, fp, fn, tn int
		for i, l := range lines {
			switch {
			case dists[i] <= r.K && l.dup:
				tp++
			case dists[i] <= r.K:
				fp++
			case l.dup:
				fn++
			default:
				tn++
			}
		}
		if r.TP != tp || r.FP != fp || r.FN != fn || r.TN != tn {
			t.Errorf("k=%d: TP %d FP %d FN %d TN %d, want %d %d %d %d", r.K, r.TP, r.FP, r.FN, r.TN, tp, fp, fn, tn)
		}
		if want := float64(tp) / 3; r.Recall == nil || math.Abs(*r.Recall-want) > 1e-12 {
			t.Errorf("k=%d: recall %v, want %d/3", r.K, r.Recall, tp)
		}
		if tp+fp == 0 {
			if r.Precision != nil {
				t.Errorf("k=%d: precision %v with no pair predicted duplicate, want null", r.K, *r.Precision)
			}
		} else if want := float64(tp) / float64(tp+fp); r.Precision == nil || math.Abs(*r.Precision-want) > 1e-12 {
			t.Errorf("k=%d: precision %v, want %d/%d", r.K, r.Precision, tp, tp+fp)
		}
	}
}

func TestEvalBadLines(t *testing.T) {
	dir := t.TempDir()
	good := `{"a": "one two three four five six seven eight nine", "b": "one two three four five six seven eight ten", "duplicate": true}`
	pairs := writeFile(t, dir, "bad.jsonl", strings.Join([]string{
		good,
		`{"a": "x y", "b": "x y"}`,         // 2: no label
		`not json`,                         // 3
		`{"a": "x y", "duplicate": false}`, // 4: no b
		`{"a": "x y", "a_file": "f.txt", "b": "x y", "duplicate": true}`, // 5: both forms
		`{"a": "missing.html", "b": "x y", "duplicate": true}`,           // 6: a path that is not there
		`{"a": "x y", "b": "x y", "duplicate": "yes"}`,                   // 7: label not a boolean
		`{"a_file": "nowhere.txt", "b": "x y", "duplicate": true}`,       // 8
		`{"a": "市体育馆/游泳池", "b": "x/y", "duplicate": true}`,               // 9: a one-word text, then a path
		good,
	}, "\n"))
	_, _, err := run(t, "", "eval", "--pairs", pairs)
	if err == nil {
		t.Fatal("eval of a file with bad lines succeeded")
	}
	msg := err.Error()
	for _, n := range []int{2, 3, 4, 5, 6, 7, 8, 9} {
		if want := fmt.Sprintf("%s:%d:", pairs, n); !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	for _, n := range []int{1, 10} {
		if bad := fmt.Sprintf("%s:%d:", pairs, n); strings.Contains(msg, bad) {
			t.Errorf("error names good line %d:\n%s", n, msg)
		}
	}
	for _, want := range []string{"8 bad lines", `:2: "duplicate" is missing or null`, `"b"`, `both "a" and "a_file"`, "missing.html", "nowhere.txt", `"b": "x/y" looks like a path`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}

	for name, content := range map[string]string{"empty": "\n\n", "only bad": "[1,2]\n"} {
		p := writeFile(t, dir, "x.jsonl", content)
		if _, _, err := run(t, "", "eval", "--pairs", p); err == nil {
			t.Errorf("%s pairs file: no error", name)
		}
	}
	if _, _, err := run(t, "", "eval", "--pairs", pairs, "--features", "words,shingles:3"); err == nil || !strings.Contains(err.Error(), "shingles") {
		t.Errorf("bad --features: error %v, want one naming the option", err)
	}
	if _, _, err := run(t, "", "eval"); err == nil {
		t.Error("eval without --pairs: no error")
	}
}

func TestEvalTooShort(t *testing.T) {
	long := "The swimming pool on Castle Road closes for two weeks from the fifth of May while the changing rooms are rebuilt."
	lines := []string{
		fmt.Sprintf(`{"a": %q, "b": %q, "duplicate": true}`, long, long),
		`{"a": "Page not found", "b": "Page not found.", "duplicate": true}`,
		fmt.Sprintf(`{"a": %q, "b": "Loading…", "duplicate": false}`, long),
	}
	pairs := writeFile(t, t.TempDir(), "short.jsonl", strings.Join(lines, "\n")+"\n")
	rep := evalJSON(t, "--pairs", pairs, "--features", "words")
	checkInvariants(t, rep)
	o := rep.Options[0]
	if o.Judged != 1 || o.TooShort != 2 || !slices.Equal(o.TooShortLines, []int{2, 3}) {
		t.Errorf("judged %d, too short %d on lines %v; want 1, 2 on [2 3]", o.Judged, o.TooShort, o.TooShortLines)
	}
	if o.PairResults[1].Distance != nil {
		t.Errorf("a too-short pair has distance %d, want null", *o.PairResults[1].Distance)
	}
	out, _, err := run(t, "", "eval", "--pairs", pairs, "--features", "words")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "2 too short to fingerprint, not counted (lines 2, 3)") {
		t.Errorf("table does not report the too-short pairs:\n%s", out)
	}

	// Standard input; paths would be relative to the working directory.
	out, _, err = run(t, strings.Join(lines, "\n"), "eval", "--pairs", "-", "--features", "words")
	if err != nil || !strings.Contains(out, "3 pairs from -") || !strings.Contains(out, "lines 2, 3") {
		t.Errorf("eval --pairs -: %v\n%s", err, out)
	}

	// Nothing judged: every ratio is undefined and no k is best, but it is
	// a report, not a crash.
	pairs = writeFile(t, t.TempDir(), "thin.jsonl", lines[1]+"\n")
	rep = evalJSON(t, "--pairs", pairs, "--features", "words,char-shingles:4,min=30")
	checkInvariants(t, rep)
	for _, o := range rep.Options {
		if o.BestK != nil || o.Rows[3].F1 != nil || o.TooShort != 1 {
			t.Errorf("%s: best k %v, F1 at 3 %v, too short %d; want none, none, 1", o.Features, o.BestK, o.Rows[3].F1, o.TooShort)
		}
	}
}

func TestSplitFeatureSpecs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"words", []string{"words"}},
		{"words,word-shingles:2,char-shingles:4", []string{"words", "word-shingles:2", "char-shingles:4"}},
		{"words,char-shingles:5,min=20", []string{"words", "char-shingles:5,min=20"}},
		{"words,min=4, char-shingles:3 ,min=12", []string{"words,min=4", "char-shingles:3,min=12"}},
		{" , ", nil},
	} {
		if got := splitFeatureSpecs(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("splitFeatureSpecs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
