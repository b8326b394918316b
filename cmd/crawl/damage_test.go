package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/internal/demosite"
)

// runSafe is run with a panic turned into a test failure's message, so one
// damaged variant's panic names its seed instead of ending the test binary.
func runSafe(args ...string) (out, errOut string, err error, panicked any) {
	var o, e bytes.Buffer
	func() {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() { panicked = recover() }()
		m := &Main{Stdin: strings.NewReader(""), Stdout: &o, Stderr: &e}
		err = m.Run(context.Background(), args)
	}()
	return o.String(), e.String(), err, panicked
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{crawler.DBFile, "dropped.jsonl"} {
		b, err := os.ReadFile(filepath.Join(from, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// damage applies one seeded kind of damage to the file at path and says
// what it did.
func damage(t *testing.T, path string, seed uint64) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 0xda))
	const ps = 4096
	var what string
	switch seed % 3 {
	case 0:
		n := r.IntN(len(b))
		b, what = b[:n], fmt.Sprintf("truncated to %d of %d bytes", n, len(b))
	case 1:
		p, n := r.IntN(len(b)/ps), 1+r.IntN(4)
		clear(b[p*ps : min(len(b), (p+n)*ps)])
		what = fmt.Sprintf("pages %d..%d zeroed", p, p+n-1)
	case 2:
		n := 1 + r.IntN(200)
		for range n {
			b[2*ps+r.IntN(len(b)-2*ps)] ^= byte(1 + r.IntN(255))
		}
		what = fmt.Sprintf("%d bytes flipped past the meta pages", n)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return what
}

func hashFile(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestDamagedDataDirectory truncates, zeroes and flips bytes in copies of
// a real crawl's directory (seeded: the seed is in the subtest name; set
// SIMCRAWL_DAMAGE_VARIANTS for more) and runs every command that reads a
// data directory, and a resumed crawl, on each: none may panic or change
// the damaged file; an error must say what to do (crawl check); and a
// resume may write only to a file that checks clean.
func TestDamagedDataDirectory(t *testing.T) {
	srv := httptest.NewServer(demosite.New())
	defer srv.Close()
	dir := t.TempDir()
	seeds := writeFile(t, dir, "seeds.txt", srv.URL+"/\n")
	base := filepath.Join(dir, "base")
	crawlArgs := func(data string, maxPages int) []string {
		return []string{"--seeds", seeds, "--data", data, "--set", "fetch.delay=0s", "--set", "fetch.parallelism=1",
			"--set", "log.level=error", "--set", "fetch.retry_backoff=1ms", "--set", fmt.Sprintf("scope.max_pages=%d", maxPages)}
	}
	// A crawl stopped at a page limit: a resume has pages to fetch.
	if _, errOut, err := run(t, "", crawlArgs(base, 10)...); err != nil {
		t.Fatalf("crawl: %v\n%s", err, errOut)
	}
	if out, _, err := run(t, "", "check", "--data", base); err != nil {
		t.Fatalf("check of the undamaged crawl: %v\n%s", err, out)
	}
	variants := 15
	if n, err := fmt.Sscan(os.Getenv("SIMCRAWL_DAMAGE_VARIANTS"), &variants); n == 1 && err == nil {
		t.Logf("%d variants", variants)
	}
	reads := [][]string{{"stats"}, {"dups"}, {"dups", "--json"}, {"failed"}, {"failed", "--skipped"}, {"export"}, {"export", "--format", "warc"}, {"check"}}
	detected := 0
	for seed := range uint64(variants) {
		data := filepath.Join(dir, fmt.Sprint("v", seed))
		copyDir(t, base, data)
		db := filepath.Join(data, crawler.DBFile)
		what := damage(t, db, seed)
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			before := hashFile(t, db)
			var checkErr error
			for _, cmd := range reads {
				args := append(append([]string{}, cmd...), "--data", data)
				_, _, err, p := runSafe(args...)
				if p != nil {
					t.Errorf("%s: crawl %s panicked: %v", what, strings.Join(cmd, " "), p)
				}
				if err != nil && !strings.Contains(err.Error(), "crawl check") && !strings.Contains(err.Error(), "crawl repair") {
					t.Errorf("%s: crawl %s: %v: the error does not say what to do", what, strings.Join(cmd, " "), err)
				}
				if cmd[0] == "check" {
					checkErr = err
				}
				if hashFile(t, db) != before {
					t.Fatalf("%s: crawl %s changed the damaged file", what, strings.Join(cmd, " "))
				}
			}
			// Repair copies what can be read into a directory that checks
			// clean, and leaves the damaged one alone.
			repaired := data + "-repaired"
			out, errOut, rerr, p := runSafe("repair", "--data", data, "--out", repaired)
			if p != nil {
				t.Errorf("%s: repair panicked: %v", what, p)
			}
			if rerr != nil && !strings.Contains(rerr.Error(), "nothing could be read") {
				t.Errorf("%s: repair: %v\n%s%s", what, rerr, out, errOut)
			}
			if hashFile(t, db) != before {
				t.Fatalf("%s: repair changed the damaged file", what)
			}
			if rerr == nil {
				if _, _, err, _ := runSafe("check", "--data", repaired); err != nil {
					t.Errorf("%s: the repaired directory: %v", what, err)
				}
			}
			_, _, err, p := runSafe(crawlArgs(data, 14)...)
			if p != nil {
				t.Errorf("%s: the resumed crawl panicked: %v", what, p)
			}
			// Damage to a page's raw body or a drop's kept text only: a
			// crawl never reads them, so it resumes; the rest it refuses.
			bodiesOnly := checkErr != nil && strings.Contains(checkErr.Error(), "is damaged (bodies)")
			if checkErr != nil {
				detected++
			}
			if checkErr != nil && !bodiesOnly {
				if err == nil {
					t.Errorf("%s: crawl check failed (%v), but a resume ran", what, checkErr)
				}
				if hashFile(t, db) != before {
					t.Errorf("%s: a resume refused (%v) changed the file", what, err)
				}
			}
			t.Logf("%s: check: %v; resume: %v", what, checkErr, err)
		})
	}
	t.Logf("%d of %d variants detected as damaged", detected, variants)
}

// Finding 6 of issue 13: `crawl distance` compared random bytes as text
// ("distance 32", exit 0) where `crawl extract` refuses them.
func TestDistanceRefusesBinary(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(6, 6))
	noise := make([]byte, 4096)
	for i := range noise {
		noise[i] = byte(r.Uint32())
	}
	bin := filepath.Join(dir, "noise.bin")
	if err := os.WriteFile(bin, noise, 0o644); err != nil {
		t.Fatal(err)
	}
	text := writeFile(t, dir, "a.txt", "The cat sat on the mat while the dog slept by the door, and the children read books about ships.")
	for _, args := range [][]string{{"distance", text, bin}, {"fingerprint", bin}} {
		out, _, err := run(t, "", args...)
		if err == nil || !strings.Contains(err.Error(), "binary") || !strings.Contains(err.Error(), "noise.bin") {
			t.Errorf("crawl %s: err = %v (output %q), want the binary file refused by name", strings.Join(args, " "), err, out)
		}
	}
}

// Finding 6 of issue 13: `crawl dedup` logged a binary file as skipped, but
// `crawl failed --skipped` did not list it.
func TestDedupSkippedBinaryListed(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "pages")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, in, "a.html", "<html><head><title>Bridge</title></head><body><article><p>The old bridge over the river reopened after two years of work, with a new footpath and lights.</p></article></body></html>")
	r := rand.New(rand.NewPCG(6, 7))
	noise := make([]byte, 4096)
	for i := range noise {
		noise[i] = byte(r.Uint32())
	}
	if err := os.WriteFile(filepath.Join(in, "b.html"), noise, 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	if _, errOut, err := run(t, "", "dedup", "--data", data, "--input", in, "--set", "log.level=warn"); err != nil {
		t.Fatalf("dedup: %v\n%s", err, errOut)
	}
	out, _, err := run(t, "", "failed", "--skipped", "--data", data)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "b.html\tnon-html") {
		t.Errorf("crawl failed --skipped does not list the binary file:\n%s", out)
	}
	out, _, err = run(t, "", "stats", "--data", data, "--json")
	if err != nil || !strings.Contains(out, `"skipped": 1,`) {
		t.Errorf("stats: %v, skipped count missing:\n%s", err, out)
	}
}
