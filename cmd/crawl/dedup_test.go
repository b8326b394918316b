package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/internal/demosite"
	"github.com/simcrawl/simcrawl/storage"
	"github.com/simcrawl/simcrawl/warc"
)

// dedupDemoData crawls the demo site into a new data directory.
func dedupDemoData(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(demosite.New())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	seeds := writeFile(t, dir, "seeds.txt", srv.URL+"/\n")
	data := filepath.Join(dir, "data")
	if _, _, err := run(t, "", "--seeds", seeds, "--data", data,
		"--set", "fetch.delay=0s", "--set", "fetch.parallelism=1", "--set", "log.level=warn"); err != nil {
		t.Fatalf("crawl: %v", err)
	}
	return data
}

// exported reads `crawl export` JSON Lines of data, by URL.
func exported(t *testing.T, data string) map[string]storage.ExportRecord {
	t.Helper()
	out, _, err := run(t, "", "export", "--data", data)
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	recs := map[string]storage.ExportRecord{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r storage.ExportRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("export line: %v", err)
		}
		recs[r.URL] = r
	}
	return recs
}

func dropLogLines(t *testing.T, data string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(data, "dropped.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// Export a crawl as WARC, read it back, dedup it into a fresh data
// directory (everything kept, as the crawl kept it) and into the crawl's
// own (everything already there).
func TestDedupWARCRoundTrip(t *testing.T) {
	t.Parallel()
	data := dedupDemoData(t)
	crawled := exported(t, data)
	if len(crawled) != len(demosite.Stored) {
		t.Fatalf("crawl stored %d pages, want %d", len(crawled), len(demosite.Stored))
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "crawl.warc.gz")
	if _, _, err := run(t, "", "export", "--data", data, "--format", "warc", "--out", file); err != nil {
		t.Fatalf("export --format warc: %v", err)
	}

	// Read it back: warcinfo, then per page a response and a metadata
	// record pointing at it with the page's fingerprint.
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := warc.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	responses := map[string]string{} // record ID -> target
	fps := map[string]string{}       // target -> fingerprint
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("read back: %v", err)
		}
		types = append(types, rec.Type())
		target := rec.Header.Get("WARC-Target-URI")
		switch rec.Type() {
		case warc.TypeResponse:
			responses[rec.Header.Get("WARC-Record-ID")] = target
			resp, err := warc.ReadResponse(rec.Block)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 || !bytes.Contains(body, []byte("<html")) || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
				t.Errorf("%s: status %d, type %q, body %.40q", target, resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
			if rec.Header.Get("WARC-Payload-Digest") != warc.Digest(body) {
				t.Errorf("%s: payload digest does not match the body", target)
			}
		case warc.TypeMetadata:
			if got := responses[rec.Header.Get("WARC-Concurrent-To")]; got != target {
				t.Errorf("metadata for %s is concurrent to %q's response", target, got)
			}
			b, err := io.ReadAll(rec.Block)
			if err != nil {
				t.Fatal(err)
			}
			fields := warc.ParseFields(b)
			fps[fields.Get(warcFieldURL)] = fields.Get(warcFieldFingerprint)
			if want := fmt.Sprint(crawled[fields.Get(warcFieldURL)].Thin); fields.Get(warcFieldThin) != want {
				t.Errorf("%s: thin %q, want %s", target, fields.Get(warcFieldThin), want)
			}
		}
	}
	if want := 1 + 2*len(crawled); len(types) != want || types[0] != warc.TypeWarcinfo {
		t.Errorf("records %v, want warcinfo then %d response+metadata pairs", types, len(crawled))
	}
	for u, p := range crawled {
		if fps[u] != p.Fingerprint {
			t.Errorf("%s: WARC fingerprint %q, export says %q", u, fps[u], p.Fingerprint)
		}
	}

	// Into a fresh data directory: every page kept, with the same text.
	fresh := filepath.Join(dir, "fresh")
	kept := filepath.Join(dir, "kept.jsonl")
	out, _, err := run(t, "", "dedup", "--input", file, "--data", fresh, "--out", kept, "--set", "log.level=warn")
	if err != nil {
		t.Fatalf("dedup into a fresh directory: %v", err)
	}
	if !strings.Contains(out, fmt.Sprintf("kept %d", len(crawled))) || !strings.Contains(out, "dropped 0 exact + 0 near") {
		t.Errorf("dedup summary:\n%s", out)
	}
	again := exported(t, fresh)
	if len(again) != len(crawled) {
		t.Errorf("fresh directory holds %d pages, want %d", len(again), len(crawled))
	}
	for u, p := range crawled {
		q, ok := again[u]
		if !ok {
			t.Errorf("%s not kept", u)
			continue
		}
		if q.Fingerprint != p.Fingerprint || q.Text != p.Text || q.Thin != p.Thin {
			t.Errorf("%s: fingerprint %s thin %v, crawl had %s %v", u, q.Fingerprint, q.Thin, p.Fingerprint, p.Thin)
		}
	}
	if n := dropLogLines(t, fresh); n != 0 {
		t.Errorf("fresh drop log has %d lines", n)
	}
	keptLines, err := os.ReadFile(kept)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(keptLines), "\n"); n != len(crawled) {
		t.Errorf("--out has %d lines, want %d", n, len(crawled))
	}

	// Into the crawl's own directory: every URL is stored there already,
	// so every record is skipped; none is logged as a duplicate of itself.
	before := dropLogLines(t, data)
	out, _, err = run(t, "", "dedup", "--input", file, "--data", data, "--set", "log.level=warn")
	if err != nil {
		t.Fatalf("dedup into the crawl's directory: %v", err)
	}
	want := fmt.Sprintf("kept 0 (0 thin), dropped 0 exact + 0 near, skipped %d", len(crawled))
	if !strings.Contains(out, want) {
		t.Errorf("dedup summary lacks %q:\n%s", want, out)
	}
	if got := dropLogLines(t, data) - before; got != 0 {
		t.Errorf("drop log grew by %d lines, want 0", got)
	}
}

// dedupFixture writes a small HTML tree and a JSON Lines file.
func dedupFixture(t *testing.T) (tree, jsonl string) {
	t.Helper()
	dir := t.TempDir()
	tree = filepath.Join(dir, "site")
	a := strings.Join(demosite.Words(1, 300), " ")
	b := strings.Join(demosite.Words(2, 300), " ")
	page := func(title, text, chrome string) string {
		return "<html><head><title>" + title + "</title></head><body><nav>" + chrome +
			"</nav><article><h1>" + title + "</h1><p>" + text + ".</p></article></body></html>"
	}
	for name, content := range map[string]string{
		"a.html":            page("A", a, "Home"),
		"b.htm":             page("B", b, "Home"),
		"mirror/a.html":     page("A", a, "Mirror home"), // same text after extraction
		"notes.txt":         a,                           // not HTML: passed over
		"deep/er/copy.html": page("B", b, "Elsewhere"),
	} {
		p := filepath.Join(tree, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Dir(p), filepath.Base(p), content)
	}
	lines := []string{
		`{"url": "http://example.com/c", "text": "` + strings.Join(demosite.Words(3, 300), " ") + `."}`,
		`not json`,
		`{"url": "http://example.com/a-copy", "html": "` + page("A", a, "Copy") + `"}`,
		`{"url": "http://example.com/empty"}`,
		``,
	}
	jsonl = writeFile(t, dir, "pages.jsonl", strings.Join(lines, "\n"))
	return tree, jsonl
}

func TestDedupHTMLTreeAndJSONL(t *testing.T) {
	tree, jsonl := dedupFixture(t)
	data := filepath.Join(t.TempDir(), "data")
	kept := filepath.Join(t.TempDir(), "kept.jsonl")
	out, errs, err := run(t, "", "dedup", "--data", data, "--out", kept, "--input", tree, jsonl)
	if err != nil {
		t.Fatalf("dedup: %v\n%s", err, errs)
	}
	// Tree in lexical order: a.html, b.htm, deep/er/copy.html (= b),
	// mirror/a.html (= a); then c (new) and a-copy (= a).
	if want := "read 6 records, kept 3 (0 thin), dropped 3 exact + 0 near"; !strings.Contains(out, want) {
		t.Errorf("summary lacks %q:\n%s", want, out)
	}
	for _, want := range []string{"not a JSON object", "neither html nor text"} {
		if !strings.Contains(errs, want) {
			t.Errorf("log lacks %q:\n%s", want, errs)
		}
	}
	var drops []string
	f, err := os.Open(filepath.Join(data, "dropped.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := storage.ReadDropLog(f, func(d storage.DropRecord) error {
		drops = append(drops, filepath.Base(d.URL)+">"+filepath.Base(d.DuplicateOf))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(drops, " "), "copy.html>b.htm a.html>a.html a-copy>a.html"; got != want {
		t.Errorf("drops %s, want %s", got, want)
	}
	b, err := os.ReadFile(kept)
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r storage.ExportRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		urls = append(urls, r.URL)
	}
	if len(urls) != 3 || !strings.HasPrefix(urls[0], "file:///") || !strings.HasSuffix(urls[0], "/site/a.html") || urls[2] != "http://example.com/c" {
		t.Errorf("kept %v", urls)
	}

	// Resumable: a rerun decides nothing again.
	out, _, err = run(t, "", "dedup", "--data", data, "--input", tree, "--input", jsonl, "--set", "log.level=error")
	if err != nil {
		t.Fatal(err)
	}
	if want := "kept 0 (0 thin), dropped 0 exact + 0 near, skipped 6"; !strings.Contains(out, want) {
		t.Errorf("rerun summary lacks %q:\n%s", want, out)
	}
}

func TestDedupBadUsage(t *testing.T) {
	tree, _ := dedupFixture(t)
	for name, args := range map[string][]string{
		"no input":       {"dedup", "--data", t.TempDir()},
		"missing input":  {"dedup", "--data", t.TempDir(), "--input", filepath.Join(tree, "nope")},
		"bad format":     {"dedup", "--data", t.TempDir(), "--input", tree, "--format", "pdf"},
		"dir as jsonl":   {"dedup", "--data", t.TempDir(), "--input", tree, "--format", "jsonl"},
		"bad warc input": {"dedup", "--data", t.TempDir(), "--input", filepath.Join(tree, "a.html"), "--format", "warc"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := run(t, "", args...); err == nil {
				t.Errorf("%v: no error", args)
			}
		})
	}
}

// A data directory in use (a crawl, another dedup) is refused with the
// crawl's own message.
func TestDedupRefusedWhileInUse(t *testing.T) {
	t.Parallel() // waits out the 1 s lock timeout; its own directories
	tree, _ := dedupFixture(t)
	data := t.TempDir()
	c, err := crawler.Open(crawler.Options{DataDir: data, K: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _, err = run(t, "", "dedup", "--data", data, "--input", tree)
	if err == nil || !strings.Contains(err.Error(), "another crawl") {
		t.Fatalf("dedup on a busy data directory: err = %v, want 'another crawl'", err)
	}
}

// kill -9 in the middle of a dedup, then a rerun: the result is that of
// one uninterrupted run (commits follow input order), and store, drops and
// drop log agree.
func TestDedupKillNineThenResume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dedup process")
	}
	t.Parallel()
	dir := t.TempDir()
	input := filepath.Join(dir, "pages.jsonl")
	var buf bytes.Buffer
	n := 240 // 80 drops, the kill after 20
	if os.Getenv("SIMCRAWL_BIG") == "1" {
		n = 600
	}
	for i := range n {
		seed := uint64(i)
		if i%3 == 2 {
			seed = uint64(i - 1) // every third page copies the one before
		}
		fmt.Fprintf(&buf, `{"url": "http://example.com/%d", "text": "%s."}`+"\n", i, strings.Join(demosite.Words(seed, 150), " "))
	}
	if err := os.WriteFile(input, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	args := func(data string) []string {
		return []string{"dedup", "--data", data, "--input", input, "--set", "log.level=warn"}
	}
	whole, killed, finished := killThenResume(t, dir, args, 20)
	if finished {
		t.Fatal("killed dedup exited cleanly")
	}

	counts := func(data string) (pages, drops int) {
		d, err := crawler.OpenData(data, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		pages, drops, err = d.Store.Counts(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return pages, drops
	}
	wp, wd := counts(whole)
	kp, kd := counts(killed)
	if wp+wd != n || wd != n/3 {
		t.Errorf("uninterrupted run: %d pages + %d drops, want %d + %d", wp, wd, n-n/3, n/3)
	}
	if kp != wp || kd != wd {
		t.Errorf("killed and resumed: %d pages, %d drops; uninterrupted: %d, %d", kp, kd, wp, wd)
	}
	if got := dropLogLines(t, killed); got != kd {
		t.Errorf("drop log has %d lines, store %d drops", got, kd)
	}
	if a, b := exported(t, whole), exported(t, killed); len(a) != len(b) {
		t.Errorf("exports differ in size: %d and %d", len(a), len(b))
	} else {
		for u, p := range a {
			if b[u].Fingerprint != p.Fingerprint {
				t.Errorf("%s: %s after resume, %s uninterrupted", u, b[u].Fingerprint, p.Fingerprint)
			}
		}
	}
}

// Malformed input lines are skipped, each warned about, and counted in the
// summary.
func TestDedupCountsMalformedLines(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "in.jsonl", `{"url":"https://example.org/a","text":"A first record with enough words to be fingerprinted by the near-duplicate stage of the crawler."}
not json at all
{"url":"https://example.org/b"}
{"url":"https://example.org/empty","text":"","title":"An empty page, as crawl export writes it"}
`)
	out, _, err := run(t, "", "dedup", "--data", filepath.Join(dir, "data"), "--input", in, "--set", "log.level=error")
	if err != nil {
		t.Fatalf("dedup: %v", err)
	}
	if !strings.Contains(out, "Skipped 2 malformed input lines or records") || !strings.Contains(out, "kept 2 (1 thin)") {
		t.Errorf("summary does not count the two bad lines, or not the empty page as a thin one kept:\n%s", out)
	}
}

// killThenResume runs the dedup of args once uninterrupted into dir/whole,
// and once into dir/killed, killed (SIGKILL) after it logged minDrops
// drops and then rerun to the end; the rerun must report skipped records.
// finished says the killed process had ended before the kill.
func killThenResume(t *testing.T, dir string, args func(data string) []string, minDrops int) (whole, killed string, finished bool) {
	t.Helper()
	whole = filepath.Join(dir, "whole")
	if _, _, err := run(t, "", args(whole)...); err != nil {
		t.Fatal(err)
	}
	killed = filepath.Join(dir, "killed")
	cmd, _ := startCrawlProcess(t, args(killed)...)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if b, err := os.ReadFile(filepath.Join(killed, "dropped.jsonl")); err == nil && bytes.Count(b, []byte("\n")) >= minDrops {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("dedup process dropped nothing in time")
		}
		time.Sleep(time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	finished = cmd.Wait() == nil
	out, _, err := run(t, "", args(killed)...)
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if !strings.Contains(out, "skipped") {
		t.Errorf("resume summary:\n%s", out)
	}
	return whole, killed, finished
}

// crawl export's JSON Lines are dedup input: deduplicated into a fresh
// data directory they keep everything (all distinct already), and export
// again with the same title, text, language, fingerprint and fetch time.
func TestDedupExportJSONLRoundTrip(t *testing.T) {
	data := dedupDemoData(t)
	file := filepath.Join(t.TempDir(), "pages.jsonl")
	if _, _, err := run(t, "", "export", "--data", data, "--out", file); err != nil {
		t.Fatalf("export: %v", err)
	}
	again := filepath.Join(t.TempDir(), "again")
	if _, errOut, err := run(t, "", "dedup", "--data", again, "--input", file, "--set", "log.level=warn"); err != nil {
		t.Fatalf("dedup: %v\n%s", err, errOut)
	}
	want, got := exported(t, data), exported(t, again)
	if len(got) != len(want) {
		t.Fatalf("%d pages after the round trip, %d before", len(got), len(want))
	}
	langs := 0
	for u, w := range want {
		g := got[u]
		if g.Title != w.Title || g.Text != w.Text || g.Lang != w.Lang || g.Fingerprint != w.Fingerprint || g.FetchedAt != w.FetchedAt {
			t.Errorf("%s after the round trip:\n got %+v\nwant %+v", u, g, w)
		}
		if w.Lang != "" {
			langs++
		}
	}
	if langs == 0 {
		t.Error("no exported page has a language: the check is empty")
	}
}

// A page stored under the URL the crawl requested, fetched from another
// after a redirect, is exported under its final URL (WARC-Target-URI)
// with the requested one in its metadata record. Read back into the
// crawl's own directory it is that stored page again, skipped, not logged
// as a duplicate of itself.
func TestDedupWARCOfRedirectedPage(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Write([]byte(`<html><head><title>Home</title></head><body><p>` + strings.Join(demosite.Words(21, 120), " ") + `</p><a href="/old">story</a></body></html>`))
		case "/old":
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
		case "/new":
			w.Write([]byte(`<html><head><title>Story</title></head><body><article><p>` + strings.Join(demosite.Words(22, 300), " ") + `</p></article></body></html>`))
		default:
			http.NotFound(w, r)
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	dir := t.TempDir()
	seeds := writeFile(t, dir, "seeds.txt", srv.URL+"/\n")
	data := filepath.Join(dir, "data")
	if _, _, err := run(t, "", "--seeds", seeds, "--data", data, "--set", "fetch.delay=0s", "--set", "log.level=warn"); err != nil {
		t.Fatalf("crawl: %v", err)
	}
	if p, ok := exported(t, data)[srv.URL+"/old"]; !ok || p.FinalURL != srv.URL+"/new" {
		t.Fatalf("test setup: /old not stored with final URL /new: %+v", p)
	}
	file := filepath.Join(dir, "crawl.warc.gz")
	if _, _, err := run(t, "", "export", "--data", data, "--format", "warc", "--out", file); err != nil {
		t.Fatalf("export: %v", err)
	}
	out, _, err := run(t, "", "dedup", "--input", file, "--data", data, "--set", "log.level=warn")
	if err != nil {
		t.Fatalf("dedup: %v", err)
	}
	if !strings.Contains(out, "kept 0 (0 thin), dropped 0 exact + 0 near, skipped 2") {
		t.Errorf("dedup of the crawl's own export into its directory:\n%s", out)
	}
	if n := dropLogLines(t, data); n != 0 {
		t.Errorf("drop log has %d lines, want none", n)
	}
	// Into a fresh directory: the page comes back under the URL it was
	// requested as, with the URL it was fetched from as its final URL.
	fresh := filepath.Join(dir, "fresh")
	if _, errOut, err := run(t, "", "dedup", "--input", file, "--data", fresh, "--set", "log.level=warn"); err != nil {
		t.Fatalf("dedup into a fresh directory: %v\n%s", err, errOut)
	}
	if p, ok := exported(t, fresh)[srv.URL+"/old"]; !ok || p.FinalURL != srv.URL+"/new" {
		t.Errorf("in a fresh directory /old is %+v, want it with final URL /new", p)
	}
}
