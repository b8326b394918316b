package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/crawler"
)

// crawl eval measures, on pairs a user labelled, how well "distance <= k
// means duplicate" separates duplicates from distinct pages, for every k
// from 0 to evalMaxK and each feature option. It reads texts and files
// exactly as the crawler would see them: HTML through extract (readText),
// text through the same Fingerprinter.
//
// The pairs file is JSON Lines, one object a line; blank lines are skipped
// and fields other than these are ignored (keep notes in "note"):
//
//	{"a": TEXT_OR_PATH, "b": TEXT_OR_PATH, "duplicate": true|false}
//	{"a_file": PATH, "b_file": PATH, "duplicate": ...}
//
// A value of "a" or "b" is a path when it has no whitespace and names an
// existing file; when it looks like a path (ASCII file-name characters with
// a slash or a .html/.htm/.txt/.md ending) but names no file, the line is an
// error rather than a one-word text. "a_file"/"b_file" are always paths.
// Relative paths are relative to the pairs file's directory.
//
// --json prints one object:
//
//	pairs_file, pairs, duplicates, non_duplicates
//	options[]: features (the spec given), scheme (Options.String),
//	  judged (pairs with both sides fingerprinted), too_short (pairs where
//	  a side has fewer than min distinct features; not in the counts),
//	  too_short_lines[], best_k (highest F1, ties to the smaller k; null
//	  when F1 is undefined for every k),
//	  rows[]: k, tp, fp, fn, tn, precision, recall, f1 (null when
//	    undefined: precision with no pair predicted duplicate, recall with
//	    no duplicate judged, f1 with neither),
//	  pairs[]: line, duplicate, distance (null when too short),
//	    exact (the same text but for punctuation, spacing and case),
//	    similarity, containment (the sketches' estimates; null when too short)
//	  judge_rows[]: as rows, for the crawler's two-stage rule at each k:
//	    exact, or within k bits (the larger of k and short_k for a short
//	    pair) and verified by the sketches
//	  best_judge_k: as best_k, for judge_rows
//	  pairs[] also carry short: a side has fewer than short_features
//	    features, so the crawl that meets it second takes short_k
//	thresholds: similarity, containment, size_ratio (the verification's),
//	  short_k, short_features (the short texts' radius and bound)

const evalMaxK = 10

var evalDefaultFeatures = []string{"words", "word-shingles:2", "char-shingles:4"}

func (m *Main) runEval(ctx context.Context, args []string) error {
	fset := m.newFlagSet("eval")
	pairsPath := fset.String("pairs", "", "labelled pairs, JSON Lines: {\"a\": TEXT|PATH, \"b\": TEXT|PATH, \"duplicate\": BOOL} (- for stdin)")
	features := fset.String("features", strings.Join(evalDefaultFeatures, ","),
		"feature options to compare, comma-separated (each as in --features of fingerprint; \",min=N\" binds to the option before it)")
	asJSON := fset.Bool("json", false, "print the table as JSON")
	th := contentseen.DefaultThresholds()
	fset.Float64Var(&th.Similarity, "similarity", th.Similarity, "two-stage rule: a candidate within k bits is a duplicate when its estimated Jaccard similarity is at least this ...")
	fset.Float64Var(&th.Containment, "containment", th.Containment, "... or when at least this share of the smaller text is in the larger ...")
	fset.Float64Var(&th.SizeRatio, "size-ratio", th.SizeRatio, "... and the smaller text has at least this share of the larger's shingles")
	var sr shortRadius
	fset.IntVar(&sr.K, "short-k", crawler.DefaultShortK, "two-stage rule: a pair with a side of fewer than --short-features features takes the larger of k and this as its radius")
	fset.IntVar(&sr.Features, "short-features", crawler.DefaultShortFeatures, "the bound of --short-k (0: no pair is short)")
	if err := fset.Parse(args); err != nil {
		return err
	}
	if *pairsPath == "" || fset.NArg() > 0 {
		return usageErrorf(fset, "eval: want --pairs FILE and no other arguments")
	}
	for _, v := range []float64{th.Similarity, th.Containment, th.SizeRatio} {
		if !(v > 0 && v <= 1) {
			return usageErrorf(fset, "eval: --similarity, --containment and --size-ratio must be in (0, 1], got %v", v)
		}
	}
	if sr.K < 0 || sr.K > 64 || sr.Features < 0 {
		return usageErrorf(fset, "eval: --short-k must be 0..64 and --short-features >= 0, got %d and %d", sr.K, sr.Features)
	}
	specs := splitFeatureSpecs(*features)
	if len(specs) == 0 {
		return usageErrorf(fset, "eval: --features: no feature option given")
	}
	for _, s := range specs {
		if _, err := contentseen.ParseOptions(s); err != nil {
			return usageErrorf(fset, "eval: --features: %v", err)
		}
	}
	fpers := make([]*contentseen.Fingerprinter, len(specs))
	for i, s := range specs {
		f, err := newFingerprinter(s)
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		fpers[i] = f
	}

	pairs, err := m.readPairs(*pairsPath)
	if err != nil {
		return err
	}
	rep := evalReport{PairsFile: *pairsPath, Pairs: len(pairs),
		Thresholds: evalThresholds{Similarity: th.Similarity, Containment: th.Containment, SizeRatio: th.SizeRatio,
			ShortK: sr.K, ShortFeatures: sr.Features}}
	for _, p := range pairs {
		if p.dup {
			rep.Duplicates++
		} else {
			rep.NonDuplicates++
		}
	}
	for i, f := range fpers {
		o, err := evaluate(ctx, specs[i], f, pairs, th, sr)
		if err != nil {
			return err
		}
		rep.Options = append(rep.Options, o)
	}
	if *asJSON {
		enc := json.NewEncoder(m.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	rep.print(m.Stdout)
	return nil
}

// splitFeatureSpecs splits "words,char-shingles:5,min=20" into options:
// a part with "=" is a field of the option before it, not an option.
func splitFeatureSpecs(s string) []string {
	var specs []string
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		switch {
		case part == "":
		case strings.Contains(part, "=") && len(specs) > 0:
			specs[len(specs)-1] += "," + part
		default:
			specs = append(specs, part)
		}
	}
	return specs
}

// evalPair is one labelled pair: the texts as the crawler would
// fingerprint them.
type evalPair struct {
	line int
	a, b string
	dup  bool
}

// pairLine is a pairs-file line as written. Pointers tell a missing field
// from an empty one.
type pairLine struct {
	A         *string `json:"a"`
	B         *string `json:"b"`
	AFile     *string `json:"a_file"`
	BFile     *string `json:"b_file"`
	Duplicate *bool   `json:"duplicate"`
}

// maxLineErrors bounds how many bad lines one error lists.
const maxLineErrors = 10

// readPairs reads and resolves every line of the pairs file. Bad lines are
// all reported (up to maxLineErrors), each as FILE:LINE.
func (m *Main) readPairs(name string) ([]evalPair, error) {
	var r io.Reader = m.Stdin
	dir := "."
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("eval: %w", err)
		}
		defer f.Close() // read-only: a close error loses nothing
		r = f
		dir = filepath.Dir(name)
	}
	texts := map[string]string{} // path -> text, for files used in several pairs
	var pairs []evalPair
	var errs []error
	bad := 0
	br := bufio.NewReaderSize(r, 1<<16)
	for n := 1; ; n++ {
		line, rerr := br.ReadString('\n')
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return nil, fmt.Errorf("eval: read %s: %w", name, rerr)
		}
		if strings.TrimSpace(line) != "" {
			p, err := m.parsePair(dir, line, texts)
			if err != nil {
				bad++
				if bad <= maxLineErrors {
					errs = append(errs, fmt.Errorf("%s:%d: %w", name, n, err))
				}
			} else {
				p.line = n
				pairs = append(pairs, p)
			}
		}
		if rerr != nil {
			break
		}
	}
	if bad > maxLineErrors {
		errs = append(errs, fmt.Errorf("... and %d more bad line%s", bad-maxLineErrors, plural(bad-maxLineErrors)))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("eval: %d bad line%s in %s:\n%w", bad, plural(bad), name, errors.Join(errs...))
	}
	if len(pairs) == 0 {
		return nil, fmt.Errorf("eval: %s: no pairs", name)
	}
	return pairs, nil
}

func (m *Main) parsePair(dir, line string, texts map[string]string) (evalPair, error) {
	var pl pairLine
	if err := json.Unmarshal([]byte(line), &pl); err != nil {
		return evalPair{}, fmt.Errorf("not a JSON object with a, b, duplicate: %w", err)
	}
	if pl.Duplicate == nil {
		return evalPair{}, errors.New(`"duplicate" is missing or null: want true or false`)
	}
	a, err := m.pairSide(dir, "a", pl.A, pl.AFile, texts)
	if err != nil {
		return evalPair{}, err
	}
	b, err := m.pairSide(dir, "b", pl.B, pl.BFile, texts)
	if err != nil {
		return evalPair{}, err
	}
	return evalPair{a: a, b: b, dup: *pl.Duplicate}, nil
}

// pairSide resolves one side of a pair to its text.
func (m *Main) pairSide(dir, key string, val, file *string, texts map[string]string) (string, error) {
	switch {
	case val != nil && file != nil:
		return "", fmt.Errorf("both %q and %q given", key, key+"_file")
	case val == nil && file == nil:
		return "", fmt.Errorf("missing %q (a text or a path) or %q", key, key+"_file")
	case file != nil:
		return m.pairFile(dir, key+"_file", *file, texts)
	}
	v := *val
	if strings.ContainsFunc(v, unicode.IsSpace) || v == "" {
		return v, nil
	}
	p := v
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
		return m.pairFile(dir, key, v, texts)
	}
	if looksLikePath(v) {
		return "", fmt.Errorf("%q: %q looks like a path, but there is no such file under %s", key, v, dir)
	}
	return v, nil
}

func (m *Main) pairFile(dir, key, name string, texts map[string]string) (string, error) {
	if !filepath.IsAbs(name) {
		name = filepath.Join(dir, name)
	}
	if t, ok := texts[name]; ok {
		return t, nil
	}
	t, err := m.readText(name)
	if err != nil {
		return "", fmt.Errorf("%q: %w", key, err)
	}
	texts[name] = t
	return t, nil
}

// looksLikePath reports whether a one-word value of "a" or "b" is meant as
// a path: ASCII file-name characters with a slash or a text-file ending.
// A one-word text (a Chinese sentence, say) is not.
func looksLikePath(v string) bool {
	for _, r := range v {
		if r > unicode.MaxASCII || !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._-/\\~:", r)) {
			return false
		}
	}
	if strings.ContainsAny(v, `/\`) {
		return true
	}
	switch strings.ToLower(filepath.Ext(v)) {
	case ".html", ".htm", ".xhtml", ".txt", ".text", ".md":
		return true
	}
	return false
}

// evalReport is what --json prints; see the field list at the top of the
// file.
type evalReport struct {
	PairsFile     string         `json:"pairs_file"`
	Pairs         int            `json:"pairs"`
	Duplicates    int            `json:"duplicates"`
	NonDuplicates int            `json:"non_duplicates"`
	Options       []evalOption   `json:"options"`
	Thresholds    evalThresholds `json:"thresholds"`
}

type evalThresholds struct {
	Similarity    float64 `json:"similarity"`
	Containment   float64 `json:"containment"`
	SizeRatio     float64 `json:"size_ratio"`
	ShortK        int     `json:"short_k"`
	ShortFeatures int     `json:"short_features"`
}

// shortRadiusText says, for the two-stage table's heading, how far a short
// pair is looked for: nowhere further when no text is short.
func (t evalThresholds) shortRadiusText() string {
	if t.ShortFeatures == 0 {
		return "no pair is short: --short-features 0"
	}
	return fmt.Sprintf("the larger of k and %d for a pair with a side under %d features", t.ShortK, t.ShortFeatures)
}

// shortRadius is the crawler's radius for short texts (crawler.Options
// ShortK and ShortFeatures).
type shortRadius struct{ K, Features int }

type evalOption struct {
	Features      string     `json:"features"`
	Scheme        string     `json:"scheme"`
	Judged        int        `json:"judged"`
	TooShort      int        `json:"too_short"`
	TooShortLines []int      `json:"too_short_lines"`
	BestK         *int       `json:"best_k"`
	Rows          []evalRow  `json:"rows"`
	PairResults   []evalDist `json:"pairs"`
	JudgeRows     []evalRow  `json:"judge_rows"`
	BestJudgeK    *int       `json:"best_judge_k"`
	shortK        int        // the short pairs' radius (shortRadius.K)
}

type evalRow struct {
	K         int      `json:"k"`
	TP        int      `json:"tp"`
	FP        int      `json:"fp"`
	FN        int      `json:"fn"`
	TN        int      `json:"tn"`
	Precision *float64 `json:"precision"`
	Recall    *float64 `json:"recall"`
	F1        *float64 `json:"f1"`
}

type evalDist struct {
	Line        int      `json:"line"`
	Duplicate   bool     `json:"duplicate"`
	Distance    *int     `json:"distance"`
	Exact       bool     `json:"exact"`
	Similarity  *float64 `json:"similarity"`
	Containment *float64 `json:"containment"`
	Short       bool     `json:"short"`
	verified    bool     // the sketches verify the pair
}

// judgedDuplicate is the two-stage rule at k: exact, or within k bits (for
// a short pair the larger of k and shortK) and verified. A pair is short
// when either side is: the crawl that meets that side second looks that
// far.
func (p evalDist) judgedDuplicate(k, shortK int) bool {
	if p.Short {
		k = max(k, shortK)
	}
	return p.Distance != nil && (p.Exact || *p.Distance <= k && p.verified)
}

// evaluate fingerprints both sides of every pair with f and counts, for
// each k, the pairs predicted duplicate (distance <= k) against the labels.
// Pairs with a side too short to fingerprint are set aside, not guessed.
func evaluate(ctx context.Context, spec string, f *contentseen.Fingerprinter, pairs []evalPair, th contentseen.Thresholds, sr shortRadius) (evalOption, error) {
	o := evalOption{Features: spec, Scheme: f.Options().String(), TooShortLines: []int{}, shortK: sr.K}
	type fingerprinted struct {
		fp       contentseen.Fingerprint
		features int
	}
	fps := map[string]fingerprinted{} // text -> fingerprint; files recur across pairs
	short := map[string]bool{}
	fingerprint := func(text string) (fingerprinted, bool, error) {
		if fp, ok := fps[text]; ok {
			return fp, true, nil
		}
		if short[text] {
			return fingerprinted{}, false, nil
		}
		fp, n, err := f.Fingerprint(text)
		switch {
		case errors.Is(err, contentseen.ErrNotEnoughContent):
			short[text] = true
			return fingerprinted{}, false, nil
		case err != nil:
			return fingerprinted{}, false, err
		}
		fps[text] = fingerprinted{fp, n}
		return fps[text], true, nil
	}
	sketches := map[string]contentseen.Sketch{}
	sketch := func(text string) contentseen.Sketch {
		sk, ok := sketches[text]
		if !ok {
			sk = contentseen.SketchOf(text)
			sketches[text] = sk
		}
		return sk
	}
	var dists []int
	var labels []bool
	var judged []evalDist // the pairs of dists
	for _, p := range pairs {
		if err := ctx.Err(); err != nil {
			return o, err
		}
		fa, oka, err := fingerprint(p.a)
		if err != nil {
			return o, fmt.Errorf("eval: line %d: %w", p.line, err)
		}
		fb, okb, err := fingerprint(p.b)
		if err != nil {
			return o, fmt.Errorf("eval: line %d: %w", p.line, err)
		}
		if !oka || !okb {
			o.TooShort++
			o.TooShortLines = append(o.TooShortLines, p.line)
			o.PairResults = append(o.PairResults, evalDist{Line: p.line, Duplicate: p.dup})
			continue
		}
		d := contentseen.Distance(fa.fp, fb.fp)
		res := contentseen.Compare(sketch(p.a), sketch(p.b))
		exact := contentseen.TextDigest(p.a) == contentseen.TextDigest(p.b)
		o.Judged++
		dists = append(dists, d)
		labels = append(labels, p.dup)
		pr := evalDist{Line: p.line, Duplicate: p.dup, Distance: &d, Exact: exact,
			Similarity: &res.Similarity, Containment: &res.Containment, verified: th.Verify(res),
			Short: min(fa.features, fb.features) < sr.Features}
		judged = append(judged, pr)
		o.PairResults = append(o.PairResults, pr)
	}
	o.Rows = confusionRows(dists, labels, nil)
	o.BestK = bestK(o.Rows)
	o.JudgeRows = confusionRows(dists, labels, func(i, k int) bool { return judged[i].judgedDuplicate(k, sr.K) })
	o.BestJudgeK = bestK(o.JudgeRows)
	return o, nil
}

// bestK returns the k of the row with the highest F1, the smaller k on a
// tie; nil when F1 is undefined everywhere.
func bestK(rows []evalRow) *int {
	var best *int
	var bestF1 float64
	for i := range rows {
		r := &rows[i]
		if r.F1 != nil && (best == nil || *r.F1 > bestF1) {
			k := r.K
			best, bestF1 = &k, *r.F1
		}
	}
	return best
}

// confusionRows counts, for k = 0..evalMaxK, true and false positives and
// negatives of "distance <= k means duplicate", with precision, recall and
// F1 (nil where the denominator is zero). With judge (the two-stage rule,
// evalDist.judgedDuplicate) pair i is predicted duplicate at k when
// judge(i, k) says so.
func confusionRows(dists []int, labels []bool, judge func(i, k int) bool) []evalRow {
	rows := make([]evalRow, 0, evalMaxK+1)
	for k := 0; k <= evalMaxK; k++ {
		r := evalRow{K: k}
		for i, d := range dists {
			pred := d <= k
			if judge != nil {
				pred = judge(i, k)
			}
			switch {
			case pred && labels[i]:
				r.TP++
			case pred:
				r.FP++
			case labels[i]:
				r.FN++
			default:
				r.TN++
			}
		}
		r.Precision = ratio(r.TP, r.TP+r.FP)
		r.Recall = ratio(r.TP, r.TP+r.FN)
		r.F1 = ratio(2*r.TP, 2*r.TP+r.FP+r.FN)
		rows = append(rows, r)
	}
	return rows
}

func ratio(num, den int) *float64 {
	if den == 0 {
		return nil
	}
	v := float64(num) / float64(den)
	return &v
}

func (rep *evalReport) print(w io.Writer) {
	fmt.Fprintf(w, "%d pair%s from %s: %d duplicate%s, %d not\n", rep.Pairs, plural(rep.Pairs), rep.PairsFile, rep.Duplicates, plural(rep.Duplicates), rep.NonDuplicates)
	for _, o := range rep.Options {
		fmt.Fprintf(w, "\nfeatures %s (%s): %d pair%s judged", o.Features, o.Scheme, o.Judged, plural(o.Judged))
		if o.TooShort > 0 {
			fmt.Fprintf(w, ", %d too short to fingerprint, not counted (lines %s)", o.TooShort, joinInts(o.TooShortLines))
		}
		fmt.Fprintln(w)
		printEvalRows(w, o.Rows, o.BestK)
		if o.BestK != nil {
			o.printMistakes(w, *o.BestK)
		}
		fmt.Fprintf(w, "two-stage rule (the crawler's): exact, or within k bits (%s) and verified (similarity >= %.2f, or containment >= %.2f with size ratio >= %.2f)\n",
			rep.Thresholds.shortRadiusText(), rep.Thresholds.Similarity, rep.Thresholds.Containment, rep.Thresholds.SizeRatio)
		printEvalRows(w, o.JudgeRows, o.BestJudgeK)
		if o.BestJudgeK != nil {
			o.printJudgeMistakes(w, *o.BestJudgeK)
		}
	}
}

// printEvalRows prints one table of rows, marking the best k (nil: none).
func printEvalRows(w io.Writer, rows []evalRow, best *int) {
	fmt.Fprintf(w, "%4s %4s %4s %4s %4s %9s %7s %6s\n", "k", "TP", "FP", "FN", "TN", "precision", "recall", "F1")
	for _, r := range rows {
		mark := ""
		if best != nil && *best == r.K {
			mark = "  <- best"
		}
		fmt.Fprintf(w, "%4d %4d %4d %4d %4d %9s %7s %6s%s\n", r.K, r.TP, r.FP, r.FN, r.TN,
			fmtRatio(r.Precision), fmtRatio(r.Recall), fmtRatio(r.F1), mark)
	}
}

// printJudgeMistakes lists the lines the two-stage rule gets wrong at k,
// with both measures.
func (o *evalOption) printJudgeMistakes(w io.Writer, k int) {
	var wrong []string
	for _, p := range o.PairResults {
		if p.Distance == nil || p.judgedDuplicate(k, o.shortK) == p.Duplicate {
			continue
		}
		kind := "false negative"
		if !p.Duplicate {
			kind = "false positive"
		}
		wrong = append(wrong, fmt.Sprintf("line %d (%s: %d bits, similarity %.2f, containment %.2f)", p.Line, kind, *p.Distance, *p.Similarity, *p.Containment))
	}
	if len(wrong) == 0 {
		fmt.Fprintf(w, "at k=%d: no mistakes\n", k)
		return
	}
	fmt.Fprintf(w, "at k=%d: %s\n", k, strings.Join(wrong, "; "))
}

// printMistakes lists the lines judged wrongly at k, so that a user can
// check the labels or see which edits move a fingerprint most.
func (o *evalOption) printMistakes(w io.Writer, k int) {
	var fp, fn []int
	for _, p := range o.PairResults {
		switch {
		case p.Distance == nil:
		case *p.Distance <= k && !p.Duplicate:
			fp = append(fp, p.Line)
		case *p.Distance > k && p.Duplicate:
			fn = append(fn, p.Line)
		}
	}
	fmt.Fprintf(w, "at k=%d: false positives on lines %s; false negatives on lines %s\n", k, joinInts(fp), joinInts(fn))
}

func fmtRatio(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", *v)
}

func joinInts(xs []int) string {
	if len(xs) == 0 {
		return "none"
	}
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
