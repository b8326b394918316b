package crawler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/extract"
	"github.com/simcrawl/simcrawl/internal/demosite"
	"github.com/simcrawl/simcrawl/storage"
)

// sliceSource is a RecordSource over a slice.
type sliceSource struct {
	recs []*Record
	err  error // returned after the records instead of io.EOF
}

func (s *sliceSource) Next(ctx context.Context) (*Record, error) {
	if len(s.recs) == 0 {
		if s.err != nil {
			return nil, s.err
		}
		return nil, io.EOF
	}
	r := s.recs[0]
	s.recs = s.recs[1:]
	copied := *r
	return &copied, nil
}

func dedupHTML(title string, words []string) []byte {
	return fmt.Appendf(nil, "<html><head><title>%s</title></head><body><nav><a href=\"/\">Home</a></nav><article><h1>%s</h1><p>%s.</p></article></body></html>",
		title, title, strings.Join(words, " "))
}

// dedupTestK is the candidate radius openDedup opens with, and
// dedupTestShort the short texts' radius and bound (Options.ShortK,
// ShortFeatures); a test may set them for its duration (no crawler test
// runs in parallel).
var (
	dedupTestK     = 3
	dedupTestShort [2]int
)

func openDedup(t *testing.T, dir string) *Crawler {
	t.Helper()
	c, err := Open(Options{DataDir: dir, K: dedupTestK, ShortK: dedupTestShort[0], ShortFeatures: dedupTestShort[1], KeepDropText: true})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return c
}

func runDedup(t *testing.T, dir string, recs []*Record, onKept func(*storage.Page) error) *Summary {
	t.Helper()
	c := openDedup(t, dir)
	sum, err := c.Dedup(context.Background(), &sliceSource{recs: recs}, onKept)
	if cerr := c.Close(); cerr != nil {
		t.Errorf("Close: %v", cerr)
	}
	if err != nil {
		t.Fatalf("Dedup: %v", err)
	}
	return sum
}

func TestDedup(t *testing.T) {
	a := demosite.Words(1, 400)
	b := demosite.Words(2, 400)
	fp, err := contentseen.NewFingerprinter(contentseen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// near is a with one word appended, chosen so that its fingerprint is
	// 1..3 bits from a's, as the crawler computes them.
	base, err := url.Parse("http://example.com/a-updated")
	if err != nil {
		t.Fatal(err)
	}
	textFP := func(words []string) contentseen.Fingerprint {
		doc, err := extract.ExtractBytes(dedupHTML("A", words), "text/html", base, extract.Options{})
		if err != nil {
			t.Fatal(err)
		}
		f, _, err := fp.Fingerprint(doc.Text)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	fa := textFP(a)
	var near []string
	for _, w := range demosite.Words(9, 100) {
		cand := append(append([]string(nil), a...), w)
		if d := contentseen.Distance(fa, textFP(cand)); d >= 1 && d <= 3 {
			near = cand
			break
		}
	}
	if near == nil {
		t.Fatal("test setup: no near copy at distance 1..3")
	}
	recs := []*Record{
		{URL: "http://example.com/a", Body: dedupHTML("A", a)},
		{URL: "http://example.com/b", Body: dedupHTML("B", b)},
		{URL: "http://mirror.example/a", Body: dedupHTML("A", a)},                        // exact copy of a
		{URL: "http://example.com/a-updated", Body: dedupHTML("A", near)},                // near copy of a
		{URL: "file:///corpus/a.txt", Text: strings.Join(a, " ") + ".", Title: "A text"}, // text only: exact copy of a
		{URL: "http://example.com/short", Body: []byte("<p>Too short.</p>")},             // thin: stored, not indexed
		{URL: "http://example.com/img.png", Body: []byte("\x89PNG\r\n"), ContentType: "image/png"},
		{URL: "HTTP://EXAMPLE.COM/b", Body: dedupHTML("B", b)},                       // same canonical URL as b: already decided
		{URL: "http://example.com/b", Body: dedupHTML("B2", demosite.Words(3, 400))}, // same again, other text
	}
	dir := t.TempDir()
	var kept []*storage.Page
	sum := runDedup(t, dir, recs, func(p *storage.Page) error { kept = append(kept, p); return nil })
	r := sum.Run
	if r.Fetched != int64(len(recs)) || r.Stored != 3 || r.Thin != 1 || r.DroppedExact != 2 || r.DroppedNear != 1 || r.Skipped != 3 || r.Errors != 0 {
		t.Errorf("run = %+v, want read %d, stored 3 (1 thin), dropped 2 exact + 1 near, skipped 3 (png, two repeats)", r, len(recs))
	}
	var keptURLs []string
	for _, p := range kept {
		keptURLs = append(keptURLs, p.URL)
		if p.ID == 0 || p.Text == "" || p.Body != nil {
			t.Errorf("kept page %s: id %d, %d bytes of text, body %v: want id, text, no body", p.URL, p.ID, len(p.Text), p.Body != nil)
		}
	}
	if got, want := strings.Join(keptURLs, " "), "http://example.com/a http://example.com/b http://example.com/short"; got != want {
		t.Errorf("kept %s, want %s", got, want)
	}

	logb, err := os.ReadFile(dir + "/dropped.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	err = storage.ReadDropLog(bytes.NewReader(logb), func(d storage.DropRecord) error {
		if d.DuplicateOf != "http://example.com/a" {
			t.Errorf("drop %s duplicates %s, want http://example.com/a", d.URL, d.DuplicateOf)
		}
		reasons = append(reasons, d.URL+" "+d.Reason)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "http://mirror.example/a exact|http://example.com/a-updated near|file:///corpus/a.txt exact"
	if got := strings.Join(reasons, "|"); got != want {
		t.Errorf("drop log:\n%s\nwant\n%s", got, want)
	}

	// A rerun decides nothing again.
	sum = runDedup(t, dir, recs, nil)
	if r := sum.Run; r.Stored+r.DroppedExact+r.DroppedNear+r.Errors != 0 || r.Skipped != int64(len(recs)) {
		t.Errorf("rerun = %+v, want everything skipped", r)
	}
	if sum.Pages != 3 || sum.Drops != 3 {
		t.Errorf("after rerun: %d pages, %d drops, want 3 and 3", sum.Pages, sum.Drops)
	}
}

// A page whose URL the store already holds (crawled, or kept earlier) is
// skipped, whatever its text: the store keeps one page per URL, and a page
// is never logged as a duplicate of itself.
func TestDedupAgainstStoredURL(t *testing.T) {
	dir := t.TempDir()
	a, b := demosite.Words(1, 300), demosite.Words(2, 300)
	runDedup(t, dir, []*Record{{URL: "http://example.com/a", Body: dedupHTML("A", a)}}, nil)
	sum := runDedup(t, dir, []*Record{
		{URL: "http://example.com/a", Key: "second-a", Body: dedupHTML("A", a)},
		{URL: "http://example.com/a", Key: "third-a", Body: dedupHTML("B", b)},
	}, nil)
	if r := sum.Run; r.DroppedExact+r.DroppedNear != 0 || r.Stored != 0 || r.Skipped != 2 {
		t.Errorf("run = %+v, want both skipped", r)
	}
	if sum.Pages != 1 || sum.Drops != 0 {
		t.Errorf("%d pages, %d drops, want 1 and 0", sum.Pages, sum.Drops)
	}
}

// A source error stops Dedup after committing what came before it.
func TestDedupSourceError(t *testing.T) {
	dir := t.TempDir()
	boom := errors.New("disk on fire")
	c := openDedup(t, dir)
	sum, err := c.Dedup(context.Background(), &sliceSource{
		recs: []*Record{{URL: "http://example.com/a", Body: dedupHTML("A", demosite.Words(1, 300))}},
		err:  boom,
	}, nil)
	if cerr := c.Close(); cerr != nil {
		t.Fatal(cerr)
	}
	if !errors.Is(err, boom) {
		t.Fatalf("Dedup = %v, want %v", err, boom)
	}
	if sum == nil || sum.Pages != 1 {
		t.Fatalf("summary %+v, want the record before the error stored", sum)
	}
}

func TestDedupCancelled(t *testing.T) {
	c := openDedup(t, t.TempDir())
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Dedup(ctx, &sliceSource{recs: []*Record{{URL: "http://example.com/a", Text: "x"}}}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Dedup = %v, want context.Canceled", err)
	}
}

// A drop log in a directory that does not exist is refused before the
// data directory is created, so nothing is left behind to clean up.
func TestOpenDropLogWithoutDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	_, err := Open(Options{DataDir: dir, K: 3, DropLog: filepath.Join(t.TempDir(), "missing", "log.jsonl")})
	if err == nil || !strings.Contains(err.Error(), "no directory") {
		t.Fatalf("Open = %v, want an error naming the missing directory", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the data directory was created (%v)", err)
	}
	// In a directory of its own that exists, and in the data directory or
	// a parent of it (which Open creates), written relative or absolute,
	// it is fine.
	t.Chdir(t.TempDir())
	for _, c := range []struct{ data, log string }{
		{dir, filepath.Join(t.TempDir(), "log.jsonl")},
		{dir, filepath.Join(dir, "drops.jsonl")},
		{"d", filepath.Join(mustAbs(t, "d"), "drops.jsonl")},
		{mustAbs(t, "e"), "e/drops.jsonl"},
		{"out/data/", "out/drops.jsonl"},
	} {
		cr, err := Open(Options{DataDir: c.data, K: 3, DropLog: c.log})
		if err != nil {
			t.Fatalf("Open(data %s, drop log %s): %v", c.data, c.log, err)
		}
		if err := cr.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
