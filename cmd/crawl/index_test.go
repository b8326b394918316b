package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/internal/demosite"
	"github.com/simcrawl/simcrawl/storage"
)

// fpLine is one fingerprint of a test file with the id it stands for.
type fpLine struct {
	id uint64
	fp contentseen.Fingerprint
}

// writeFingerprints writes a fingerprint file: every third line with an
// explicit id, the others taking their line number; blank lines between.
func writeFingerprints(t *testing.T, dir, name string, fps []contentseen.Fingerprint, idBase uint64) (string, []fpLine) {
	t.Helper()
	var b strings.Builder
	var got []fpLine
	line := 1
	for i, fp := range fps {
		if i%50 == 7 {
			b.WriteString("\n") // blank lines are skipped but counted
			line++
		}
		if i%3 == 0 {
			id := idBase + uint64(i)
			fmt.Fprintf(&b, "%v\t %d\n", fp, id)
			got = append(got, fpLine{id, fp})
		} else {
			fmt.Fprintf(&b, "%v\n", fp)
			got = append(got, fpLine{uint64(line), fp})
		}
		line++
	}
	return writeFile(t, dir, name, b.String()), got
}

func TestIndexJoinAgainstBruteForce(t *testing.T) {
	seed := uint64(rand.Int64())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	dir := t.TempDir()
	var bfps, sfps []contentseen.Fingerprint
	for range 200 {
		bfps = append(bfps, contentseen.Fingerprint(r.Uint64()))
	}
	for i := range 3000 {
		fp := contentseen.Fingerprint(r.Uint64())
		if i%10 == 0 { // a neighbour of a batch fingerprint at 0..4 bits
			fp = bfps[r.IntN(len(bfps))]
			for _, b := range r.Perm(64)[:r.IntN(5)] {
				fp ^= 1 << b
			}
		}
		sfps = append(sfps, fp)
	}
	batchPath, batch := writeFingerprints(t, dir, "batch.txt", bfps, 1e6)
	storedPath, stored := writeFingerprints(t, dir, "stored.txt", sfps, 2e6)

	for _, k := range []int{0, 3} {
		var want []string
		for _, s := range stored {
			for _, b := range batch {
				if d := contentseen.Distance(s.fp, b.fp); d <= k {
					want = append(want, fmt.Sprintf("%d %d %d", b.id, s.id, d))
				}
			}
		}
		out, errOut, err := run(t, "", "index", "join", "--batch", batchPath, "--stored", storedPath, "--k", strconv.Itoa(k))
		if err != nil {
			t.Fatalf("index join: %v\n%s", err, errOut)
		}
		got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if out == "" {
			got = nil
		}
		// The output is in stored order; compare as sets.
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("k=%d: index join printed %d pairs, brute force finds %d\n got %q\nwant %q", k, len(got), len(want), got, want)
		}
		if k == 3 && len(want) < 100 {
			t.Errorf("only %d pairs: planting is broken", len(want))
		}
		if !strings.Contains(errOut, fmt.Sprintf("200 batch × %d stored", len(stored))) {
			t.Errorf("summary: %s", errOut)
		}
	}

	out, _, err := run(t, "", "index", "join", "--batch", batchPath, "--stored", storedPath, "--json", "--layout", "10x28")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var p pairJSON
	if err := json.Unmarshal([]byte(lines[0]), &p); err != nil || p.BatchID == 0 || p.StoredID == 0 {
		t.Errorf("json line %q: %+v, %v", lines[0], p, err)
	}
}

func TestIndexBuildFromFile(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	var fps []contentseen.Fingerprint
	for range 500 {
		fps = append(fps, contentseen.Fingerprint(r.Uint64()))
	}
	path, lines := writeFingerprints(t, dir, "fps.txt", fps, 1e6)
	out := filepath.Join(dir, "index.db")
	_, errOut, err := run(t, "", "index", "build", "--from", path, "--out", out, "--layout", "10x28")
	if err != nil {
		t.Fatalf("index build: %v", err)
	}
	if !strings.Contains(errOut, "indexed 500 fingerprints") {
		t.Errorf("summary: %s", errOut)
	}
	checkIndex(t, out, "10x28", "", lines)

	if _, _, err := run(t, "", "index", "build", "--from", path, "--out", out); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("build over an existing file: %v", err)
	}
}

// checkIndex opens the index file and finds every line's fingerprint
// under its id.
func checkIndex(t *testing.T, path, layout, scheme string, lines []fpLine) {
	t.Helper()
	l, err := contentseen.LayoutByName(layout)
	if err != nil {
		t.Fatal(err)
	}
	x, err := contentseen.OpenBolt(path, contentseen.BoltOptions{Layout: l, Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := x.Close(); err != nil {
			t.Error(err)
		}
	}()
	for _, ln := range lines {
		ms, err := x.Near(context.Background(), ln.fp, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) != 1 || ms[0].ID != ln.id {
			t.Fatalf("Near(%v, 0) = %+v, want id %d", ln.fp, ms, ln.id)
		}
	}
}

func TestIndexBuildAndJoinFromData(t *testing.T) {
	srv := httptest.NewServer(demosite.New())
	defer srv.Close()
	dir := t.TempDir()
	seeds := writeFile(t, dir, "seeds.txt", srv.URL+"/\n")
	data := filepath.Join(dir, "data")
	if _, _, err := run(t, "", "--seeds", seeds, "--data", data,
		"--set", "fetch.delay=0s", "--set", "fetch.parallelism=1", "--set", "log.level=warn"); err != nil {
		t.Fatalf("crawl: %v", err)
	}
	exp, _, err := run(t, "", "export", "--data", data)
	if err != nil {
		t.Fatal(err)
	}
	var pages []fpLine
	var batch strings.Builder
	for _, ln := range strings.Split(strings.TrimSpace(exp), "\n") {
		var rec storage.ExportRecord
		if err := json.Unmarshal([]byte(ln), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Thin {
			continue
		}
		fp, err := contentseen.ParseFingerprint(rec.Fingerprint)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, fpLine{rec.ID, fp})
		fmt.Fprintf(&batch, "%v %d\n", fp, 100+rec.ID)
	}
	if len(pages) == 0 {
		t.Fatal("no stored pages")
	}

	out := filepath.Join(dir, "index.db")
	if _, errOut, err := run(t, "", "index", "build", "--data", data, "--out", out); err != nil {
		t.Fatalf("index build --data: %v\n%s", err, errOut)
	}
	in, err := readDataFingerprints(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	if in.scheme == "" || in.layout != "4x16" {
		t.Errorf("data directory records layout %q, scheme %q", in.layout, in.scheme)
	}
	checkIndex(t, out, in.layout, in.scheme, pages) // built with the data directory's layout and scheme

	// Joining the stored pages against themselves finds each at distance 0.
	batchPath := writeFile(t, dir, "batch.txt", batch.String())
	got, errOut, err := run(t, "", "index", "join", "--batch", batchPath, "--stored", data, "--k", "0")
	if err != nil {
		t.Fatal(err)
	}
	// The data directory's index has the join's layout: merged with it.
	if !strings.Contains(errOut, "merged with the stored index's tables") {
		t.Errorf("summary %q: not joined with the data directory's index", errOut)
	}
	for _, p := range pages {
		if !strings.Contains(got, fmt.Sprintf("%d %d 0\n", 100+p.id, p.id)) {
			t.Errorf("join lacks page %d against itself:\n%s", p.id, got)
		}
	}
}

func TestIndexBadInput(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.txt", "0123456789abcdef\n")
	for _, tc := range []struct {
		name, content, want string
	}{
		{"short", "0123456789abcdef\n0123\n", "bad.txt:2: want 16 hex digits"},
		{"not hex", "\n0123456789abcdeg 5\n", "bad.txt:2: bad hex digit"},
		{"bad id", "0123456789abcdef x\n", "bad.txt:1: bad id"},
		{"two ids", "0123456789abcdef 1 2\n", "bad.txt:1: bad id"},
	} {
		bad := writeFile(t, dir, "bad.txt", tc.content)
		_, _, err := run(t, "", "index", "join", "--batch", good, "--stored", bad)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: join: got %v, want %q", tc.name, err, tc.want)
		}
		_, _, err = run(t, "", "index", "build", "--from", bad, "--out", filepath.Join(dir, tc.name+".db"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: build: got %v, want %q", tc.name, err, tc.want)
		}
	}
	for _, args := range [][]string{
		{"index"},
		{"index", "frobnicate"},
		{"index", "join", "--batch", good},
		{"index", "join", "--batch", good, "--stored", good, "--k", "4"},
		{"index", "join", "--batch", good, "--stored", good, "--layout", "nope"},
		{"index", "join", "--batch", good, "--stored", good, "--k", "-1"},
		{"index", "build", "--from", good},
	} {
		// Each is a mistake in the command line: exit 2, with the hint.
		_, _, err := run(t, "", args...)
		var rep bytes.Buffer
		if status := report(&rep, err); err == nil || status != exitUsage {
			t.Errorf("%q: err = %v, exit %d, want a usage error (exit %d)", args, err, status, exitUsage)
		}
	}
	// No --from and no data directory: the error says which directory
	// was meant, and where it came from.
	missing := filepath.Join(dir, "nodata")
	_, _, err := run(t, "", "index", "build", "--data", missing, "--out", filepath.Join(dir, "x.db"))
	if err == nil || !strings.Contains(err.Error(), "no data directory "+missing+": give --from") {
		t.Errorf("build without a data directory: %v", err)
	}
}

// BenchmarkFileSource measures parsing a fingerprint file (one op is one
// line; b.SetBytes(17)).
func BenchmarkFileSource(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	const n = 1 << 16
	for range n {
		fmt.Fprintf(&sb, "%v\n", contentseen.Fingerprint(r.Uint64()))
	}
	path := filepath.Join(b.TempDir(), "fps.txt")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	b.SetBytes(17 * n)
	b.ReportAllocs()
	for b.Loop() {
		src := newFileSource(f, path, 0, 17*n, 1)
		for {
			if _, _, err := src.Next(); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
	}
}

// Partitions of a fingerprint file yield every line once, in order, with
// the ids a whole read gives, whatever the number of partitions: CRLF,
// blank lines, comments and a last line without newline included.
func TestStoredPartitionsCoverFile(t *testing.T) {
	dir := t.TempDir()
	content := "0000000000000001\r\n# stored set 0123456789abcdef 5\n00000000000000ff 77\n\n\n" +
		"00000000000000f0\t12\r\n0000000000000002\n   \n0123456789abcdef\n0000000000000003"
	path := writeFile(t, dir, "fps.txt", content)
	ctx := context.Background()
	whole, err := readFingerprintFile(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint64{1, 77, 12, 7, 9, 10}; !slices.Equal(whole.ids, want) {
		t.Fatalf("ids %v, want %v", whole.ids, want)
	}
	for n := 1; n <= len(content)+2; n++ {
		parts, counted, closeAll, err := storedPartitions(ctx, path, n)
		if err != nil {
			t.Fatal(err)
		}
		var ids []uint64
		var fps []contentseen.Fingerprint
		for _, p := range parts {
			for {
				id, fp, err := p.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("n=%d: %v", n, err)
				}
				ids, fps = append(ids, id), append(fps, fp)
			}
		}
		if err := closeAll(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids, whole.ids) || !slices.Equal(fps, whole.fps) || counted() != len(ids) {
			t.Errorf("n=%d (%d partitions): ids %v fps %v counted %d, want %v %v", n, len(parts), ids, fps, counted(), whole.ids, whole.fps)
		}
	}
}

// An index file written by index build serves as the stored side (and the
// batch) of index join: the pairs are those of the fingerprint file it was
// built from.
func TestIndexJoinStoredIndexFile(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	dir := t.TempDir()
	var bfps, sfps []contentseen.Fingerprint
	for range 100 {
		bfps = append(bfps, contentseen.Fingerprint(r.Uint64()))
	}
	seen := map[contentseen.Fingerprint]bool{}
	for i := range 2000 {
		fp := contentseen.Fingerprint(r.Uint64())
		if i%10 == 0 {
			fp = bfps[r.IntN(len(bfps))]
			for _, b := range r.Perm(64)[:1+r.IntN(4)] {
				fp ^= 1 << b
			}
		}
		if !seen[fp] { // an index keeps one id per fingerprint
			seen[fp] = true
			sfps = append(sfps, fp)
		}
	}
	batchPath, _ := writeFingerprints(t, dir, "batch.txt", bfps, 1e6)
	storedPath, _ := writeFingerprints(t, dir, "stored.txt", sfps, 2e6)
	idx := filepath.Join(dir, "stored.db")
	if _, errOut, err := run(t, "", "index", "build", "--from", storedPath, "--out", idx); err != nil {
		t.Fatalf("index build: %v\n%s", err, errOut)
	}
	join := func(batch, stored, layout, how string) []string {
		t.Helper()
		args := []string{"index", "join", "--batch", batch, "--stored", stored, "--k", "3"}
		if layout != "" {
			args = append(args, "--layout", layout)
		}
		out, errOut, err := run(t, "", args...)
		if err != nil {
			t.Fatalf("index join --batch %s --stored %s: %v\n%s", batch, stored, err, errOut)
		}
		if want := fmt.Sprintf("stored fingerprints (%s)", how); !strings.Contains(errOut, want) {
			t.Errorf("index join --batch %s --stored %s --layout %s: summary %q lacks %q", batch, stored, layout, errOut, want)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		slices.Sort(lines)
		return lines
	}
	const streamed, merged = "streamed", "merged with the stored index's tables"
	want := join(batchPath, storedPath, "4x16", streamed)
	if len(want) < 50 {
		t.Fatalf("only %d pairs: planting is broken", len(want))
	}
	// The index's own layout: a merge with its tables (JoinTx).
	if got := join(batchPath, idx, "4x16", merged); !slices.Equal(got, want) {
		t.Errorf("--stored index file: %d pairs, from the fingerprint file %d\n got %q\nwant %q", len(got), len(want), got, want)
	}
	// Another layout: its fingerprints streamed, and the summary says why.
	if got := join(batchPath, idx, "10x28", "streamed: the stored index has layout 4x16, the batch's tables 10x28; --layout 4x16 would merge"); !slices.Equal(got, want) {
		t.Errorf("--stored index file, --layout 10x28: %d pairs, from the fingerprint file %d", len(got), len(want))
	}
	// No --layout: the stored index's, whichever it is.
	idx10 := filepath.Join(dir, "stored10.db")
	if _, errOut, err := run(t, "", "index", "build", "--from", storedPath, "--out", idx10, "--layout", "10x28"); err != nil {
		t.Fatalf("index build --layout 10x28: %v\n%s", err, errOut)
	}
	for _, stored := range []string{idx, idx10} {
		if got := join(batchPath, stored, "", merged); !slices.Equal(got, want) {
			t.Errorf("--stored %s, no --layout: %d pairs, from the fingerprint file %d", stored, len(got), len(want))
		}
	}
	// An index whose layout finds matches only within 2 bits: k = 3 is
	// streamed through 4x16 tables, and the summary says why.
	idx2 := filepath.Join(dir, "stored2.db")
	if _, errOut, err := run(t, "", "index", "build", "--from", storedPath, "--out", idx2, "--layout", "k2/16-16-16-16/lead1"); err != nil {
		t.Fatalf("index build --layout k2: %v\n%s", err, errOut)
	}
	if got := join(batchPath, idx2, "", "streamed: the stored index's layout k2/16-16-16-16/lead1 finds matches only within 2 bits"); !slices.Equal(got, want) {
		t.Errorf("--stored k2 index, no --layout: %d pairs, from the fingerprint file %d", len(got), len(want))
	}
	// The index as the batch: the same pairs, sides swapped.
	var swapped []string
	for _, l := range want {
		f := strings.Fields(l)
		swapped = append(swapped, f[1]+" "+f[0]+" "+f[2])
	}
	slices.Sort(swapped)
	if got := join(idx, batchPath, "4x16", streamed); !slices.Equal(got, swapped) {
		t.Errorf("--batch index file: %d pairs, want %d", len(got), len(swapped))
	}
}
