package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// readmeSkips are the README's command lines this test does not run, each
// with the reason: they need files or tools of the reader's own. Every
// other line of a sh block is run, so a new example is either run or
// listed here.
var readmeSkips = []struct {
	match, why  string
	restOfBlock bool // skip the block's lines after it too
}{
	{"go vet ./...", "the test command itself", false},
	{"SIMCRAWL_BIG=1 go test", "the tests at full size", false},
	{"./crawl distance a.html b.html", "two HTML files of the reader's", false},
	{"jq -r", "jq over the drop log, not a crawl command", false},
	{"--pairs mine.jsonl", "a pairs file of the reader's", false},
	{"--seeds sample.txt", "a sample of the reader's; the lines after it read its crawl", false},
	{"mkdir -p pages", "the pairs-file recipe (curl, jq), to the end of its block", true},
	{"./crawl dedup --data corpus-data", "inputs of the reader's", false},
	{"--data worker-a --data worker-b", "the directories of a distributed crawl's workers (TestSeveralDataDirsReadAsOneCrawl builds some)", false},
	{"--from fps.txt", "fingerprint files of the reader's", false},
	{"--batch new.txt", "fingerprint files of the reader's", false},
	{"SIMCRAWL_BIG=1 go test", "the tests at full size (tens of minutes)", false},
	{"./crawl serve --data demo-data", "the web view serves on port 8080 until Ctrl-C, and so does --ui; TestWebViewInBrowser and TestCrawlUI run them", true},
	{"go run ./internal/copyweb", "the copy-web harness: its own test (internal/copyweb) runs it", false},
	{"go run ./internal/crawlbench", "a benchmark of minutes over a prefilled index, and the profile it writes read after it: not an example of the crawl", true},
	{"go test -run TestQualityCopies", "the copy-web harness's test, run by the test command", false},
	{"SIMCRAWL_BIG=1 go test", "the tests at full size (up to an hour)", false},
	{"--backend redis://crawl-redis.example", "a Redis server of the reader's; the TestBackend tests run workers on a real one", false},
}

// The README's examples run in order, as a new user would type them in a
// fresh clone, without a conflict between them: its sh blocks are read and
// every ./crawl line run through Main, in a directory that holds the
// clone's config.yaml and cmd/crawl/testdata, against a small local site
// standing in for example.org (and the demo's real port for the one in the
// README).
func TestREADMEExamplesRunInOrder(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	site := httptest.NewServer(exampleOrg())
	defer site.Close()

	root := t.TempDir()
	for _, link := range []string{"config.yaml", "cmd"} {
		abs, err := filepath.Abs(filepath.Join("../..", link))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(abs, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(root)

	demoBase := "" // the demo's address, once it ran
	subst := func(s string) string {
		s = strings.ReplaceAll(s, "https://example.org", site.URL)
		if demoBase != "" {
			s = reDemoPort.ReplaceAllString(s, demoBase)
		}
		return s
	}
	ran := 0
	lines := readmeCommands(string(readme))
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if why, rest := readmeSkip(l.text); why != "" {
			t.Logf("README.md:%d: not run (%s): %s", l.line, why, l.text)
			for rest && i+1 < len(lines) && lines[i+1].block == l.block {
				i++
			}
			continue
		}
		words, err := shellWords(subst(l.text))
		if err != nil {
			t.Fatalf("README.md:%d: %v: %s", l.line, err, l.text)
		}
		switch {
		case len(words) >= 3 && words[0] == "go" && words[1] == "build":
			continue // the test runs the program in-process
		case len(words) == 4 && words[0] == "cat" && words[1] == ">" && strings.HasPrefix(words[3], "<<"):
			// A here-document: the lines up to its end word are the file.
			end := strings.TrimPrefix(words[3], "<<")
			var body strings.Builder
			for i++; i < len(lines) && lines[i].text != end; i++ {
				body.WriteString(subst(lines[i].text) + "\n")
			}
			if err := os.WriteFile(words[2], []byte(body.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		case len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/crawl":
			words = words[3:]
		case len(words) >= 1 && words[0] == "./crawl":
			words = words[1:]
		default:
			t.Fatalf("README.md:%d: the test does not know how to run this line; run it or list it in readmeSkips: %s", l.line, l.text)
		}
		if slices.Contains(words, "--seeds") {
			// A crawl: the politeness delay (config.yaml's 1s, an
			// example's --set fetch.delay=2s) would only space the
			// requests to the test's own loopback site (9 s of the 12); the
			// lines' own settings are still read, then this one
			// overrides them as a later --set does.
			words = append(words, "--set", "fetch.delay=0s")
		}
		out, errOut, err := run(t, "", words...)
		if err != nil {
			t.Fatalf("README.md:%d: crawl %s: %v\nstdout:\n%s\nstderr:\n%s", l.line, strings.Join(words, " "), err, out, errOut)
		}
		ran++
		if m := reDemoSite.FindStringSubmatch(out); m != nil && len(words) > 0 && words[0] == "demo" {
			demoBase = m[1]
		}
	}
	if ran < 12 {
		t.Errorf("ran %d README commands: the README's blocks were not found", ran)
	}
	// The WARC round trip of the README keeps every page the crawl stored,
	// the text/plain one too.
	if a, b := exported(t, "data"), exported(t, "data-copy"); len(a) != len(b) || len(a) < 3 {
		t.Errorf("the crawl stored %d pages, the dedup of its WARC export %d", len(a), len(b))
	}
}

var (
	reDemoSite = regexp.MustCompile(`Demo site at (http://127\.0\.0\.1:\d+)`)
	reDemoPort = regexp.MustCompile(`http://127\.0\.0\.1:35327`) // the README's example port
)

// exampleOrg is the site the README's examples crawl: two copies of an
// article (an ad line apart) and a text/plain page, all linked from the
// home page.
func exampleOrg() http.Handler {
	article := "Harbour towns along the northern coast have rebuilt their piers after the winter storms, " +
		"and fishing crews say the new stone walls held through the spring tides without damage. " +
		"Engineers from the regional office inspected every pier in April and approved the repairs, " +
		"while the council voted to fund a second phase that will extend the breakwater by forty metres. " +
		"Local cafes reopened their terraces, and the ferry to the islands runs its summer timetable again."
	page := func(title, extra string) string {
		return fmt.Sprintf(`<!doctype html><html lang="en"><head><title>%s</title></head><body>
<nav><a href="/">Home</a></nav><article><h1>%s</h1><p>%s</p>%s</article></body></html>`, title, title, article, extra)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><html><head><title>Example</title></head><body><h1>Coast news</h1>
<ul><li><a href="/a">Piers rebuilt</a></li><li><a href="/b">Piers rebuilt (syndicated)</a></li>
<li><a href="/notes.txt">Notes</a></li></ul></body></html>`)
	})
	mux.HandleFunc("/a", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, page("Piers rebuilt", "")) })
	mux.HandleFunc("/b", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, page("Piers rebuilt", `<p class="ad">Advertisement: subscribe today</p>`))
	})
	mux.HandleFunc("/notes.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "Tide tables for the harbour are posted at the ferry office.\n")
	})
	return mux
}

// readmeLine is one command line of a sh block, continuations joined.
type readmeLine struct {
	line  int // of its first line in README.md
	block int // which sh block, counting from 1
	text  string
}

// readmeCommands returns the lines of README's sh blocks, in order, with
// lines ending in a backslash or a pipe joined to the next one (without
// their comments).
func readmeCommands(readme string) []readmeLine {
	var out []readmeLine
	in, cont, block := false, false, 0
	for i, l := range strings.Split(readme, "\n") {
		switch {
		case !in && strings.TrimSpace(l) == "```sh":
			in, block = true, block+1
			continue
		case in && strings.TrimSpace(l) == "```":
			in, cont = false, false
			continue
		case !in:
			continue
		}
		code := strings.TrimSpace(stripComment(l))
		next := strings.HasSuffix(code, `\`) || strings.HasSuffix(code, "|")
		if next {
			l = strings.TrimSuffix(code, `\`)
		}
		if cont {
			out[len(out)-1].text += " " + strings.TrimSpace(l)
		} else {
			out = append(out, readmeLine{i + 1, block, l})
		}
		cont = next
	}
	return out
}

func readmeSkip(text string) (why string, restOfBlock bool) {
	for _, s := range readmeSkips {
		if strings.Contains(text, s.match) {
			return s.why, s.restOfBlock
		}
	}
	return "", false
}

// stripComment removes a shell comment: a # at the start of a word,
// outside quotes.
func stripComment(s string) string {
	var q byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q != 0:
			if c == q {
				q = 0
			}
		case c == '\'' || c == '"':
			q = c
		case c == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return s[:i]
		}
	}
	return s
}

// shellWords splits a command line as sh would for the simple commands of
// the README: words separated by blanks, quotes removed, a comment
// dropped. Anything else (pipes, substitutions, redirections but "cat >")
// is an error, for such a line is in readmeSkips.
func shellWords(s string) ([]string, error) {
	s = strings.TrimSpace(stripComment(s))
	var words []string
	var w bytes.Buffer
	inWord := false
	var q byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q != 0 && c == q:
			q = 0
		case q != 0:
			w.WriteByte(c)
		case c == '\'' || c == '"':
			q, inWord = c, true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case strings.IndexByte("|;&$`(){}", c) >= 0:
			return nil, fmt.Errorf("shell syntax %q", c)
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if q != 0 {
		return nil, fmt.Errorf("unclosed quote")
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// A text/plain page the crawl stored comes back from its WARC export
// through dedup, as the crawl took it: every stored page survives the
// round trip with its fingerprint.
func TestWARCRoundTripKeepsTextPlainPages(t *testing.T) {
	site := httptest.NewServer(exampleOrg())
	defer site.Close()
	dir := t.TempDir()
	seeds := writeFile(t, dir, "seeds.txt", site.URL+"/\n")
	data, again, warcFile := filepath.Join(dir, "data"), filepath.Join(dir, "again"), filepath.Join(dir, "data.warc.gz")
	if _, _, err := run(t, "", "--seeds", seeds, "--data", data, "--set", "fetch.delay=0s", "--set", "log.level=warn"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "", "export", "--data", data, "--format", "warc", "--out", warcFile); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "", "dedup", "--data", again, "--input", warcFile, "--set", "log.level=warn"); err != nil {
		t.Fatal(err)
	}
	want, got := exported(t, data), exported(t, again)
	if _, ok := want[site.URL+"/notes.txt"]; !ok {
		t.Fatalf("the crawl did not store the text/plain page: %v", want)
	}
	for u, w := range want {
		if g, ok := got[u]; !ok || g.Fingerprint != w.Fingerprint {
			t.Errorf("%s: after the WARC round trip %+v, before %+v", u, g, w)
		}
	}
}
