package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/simcrawl/simcrawl/internal/demosite"
)

// The browser test crawls the demo site plus two pages whose titles and
// texts hold markup, serves the result with `crawl serve`, and drives a
// real headless Chromium through every page, as a person would: it reads
// the counts, looks for the highlighted word of the diff and the drawn
// charts, labels pairs, downloads the pairs file and feeds it to
// `crawl eval`. Screenshots go to the test's temp dir, or to
// $WEBVIEW_SCREENSHOTS when set (how internal/webview/doc/*.png were
// made).

// hostileMarkup is text a page may hold: a script, an element with a
// handler, and a quote that would close an attribute.
const hostileMarkup = `<script>window.pwned=1</script><img src=x onerror="window.pwned=2"> " onmouseover="window.pwned=3" x='`

// hostilePage is an article of 200 made-up words whose title and text
// carry hostileMarkup; the copy changes one word (changedWord).
func hostilePage(copy bool) string {
	words := demosite.Words(42, 200)
	if copy {
		words[120] = changedWord
	}
	title := "Harbour notes " + hostileMarkup
	var body strings.Builder
	for i := 0; i < len(words); i += 40 {
		body.WriteString("<p>" + html.EscapeString(strings.Join(words[i:i+40], " ")) + ".</p>\n")
	}
	return "<!doctype html><html><head><title>" + html.EscapeString(title) + "</title></head><body><article><h1>" +
		html.EscapeString(title) + "</h1>\n" + body.String() + "<p>" + html.EscapeString(hostileMarkup) + "</p></article></body></html>"
}

const changedWord = "lighthouse"

// chromium returns the path of the browser, or skips the test outside CI
// when there is none.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed; .ci/run installs it (apt-get install -y chromium)")
	}
	t.Skip("chromium is not installed: apt-get update && apt-get install -y chromium (CI installs it)")
	return ""
}

func TestWebViewInBrowser(t *testing.T) {
	chromePath := chromium(t)
	mux := http.NewServeMux()
	mux.Handle("/", demosite.New())
	for path, copy := range map[string]bool{"/harbour/notes": false, "/harbour/notes-copy": true} {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, hostilePage(copy))
		})
	}
	site := httptest.NewServer(mux)
	defer site.Close()
	dir := t.TempDir()
	seeds := writeFile(t, dir, "seeds.txt", site.URL+"/\n"+site.URL+"/harbour/notes\n"+site.URL+"/harbour/notes-copy\n")
	data := filepath.Join(dir, "data")
	start := time.Now()
	if _, _, err := run(t, "", "--seeds", seeds, "--data", data,
		"--set", "fetch.delay=0s", "--set", "fetch.parallelism=1", "--set", "fetch.retries=0", "--set", "log.level=warn"); err != nil {
		t.Fatalf("crawl: %v", err)
	}

	t.Logf("crawl: %v", time.Since(start).Round(time.Millisecond))
	base, stopServe := startServe(t, data)
	defer stopServe()

	shots := os.Getenv("WEBVIEW_SCREENSHOTS")
	if shots == "" {
		shots = filepath.Join(dir, "screenshots")
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	downloads := filepath.Join(dir, "downloads")
	if err := os.MkdirAll(downloads, 0o755); err != nil {
		t.Fatal(err)
	}

	// Every wait below is bounded by this context.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromePath), chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.Headless, chromedp.DisableGPU,
		chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900))
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()

	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		start := time.Now()
		if err := chromedp.Do(bctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		t.Logf("%s: %v", what, time.Since(start).Round(time.Millisecond))
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(bctx, chromedp.TextContent(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return strings.TrimSpace(s)
	}
	eval := func(expr string) int {
		t.Helper()
		n, err := chromedp.Run(bctx, chromedp.Evaluate[int](expr))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return n
	}
	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(shots, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Nothing from the pages ran: none of the hostile scripts or
	// handlers, and no element came from a page's text.
	untouched := func(page string) {
		t.Helper()
		if n := eval(`(window.pwned === undefined ? 0 : 1) + document.querySelectorAll("img, [onmouseover], [onerror]").length + document.scripts.length - 1`); n != 0 {
			t.Errorf("%s: %d signs of page markup executed or parsed", page, n)
		}
	}

	// Overview: the counts and the chart.
	do("overview", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("svg.chart")))
	wantStored := len(demosite.Stored) + 1 // the harbour notes; the copy is dropped
	if got := text("#stored"); got != strconv.Itoa(wantStored) {
		t.Errorf("overview: %s stored, want %d", got, wantStored)
	}
	if got := text("#dropped"); got != strconv.Itoa(len(demosite.Dropped)+1) {
		t.Errorf("overview: %s dropped, want %d", got, len(demosite.Dropped)+1)
	}
	if n := eval(`[...document.querySelectorAll("svg.chart rect.bar")].filter(r => r.getBBox().height > 0).length`); n == 0 {
		t.Error("overview: the pages-per-second chart has no bar drawn")
	}
	untouched("overview")
	shot("overview.png")

	// Duplicates: one cluster per stored page with drops.
	do("duplicates", chromedp.Navigate(base+"/dups"), chromedp.WaitVisible(chromedp.CSS("#cluster-count")))
	clusters := map[string]bool{}
	for _, orig := range demosite.Dropped {
		clusters[orig] = true
	}
	if got, want := text("#cluster-count"), strconv.Itoa(len(clusters)+1); got != want {
		t.Errorf("duplicates: %s clusters shown, want %s", got, want)
	}
	if !strings.Contains(text("main"), "Harbour notes <script>window.pwned=1</script>") {
		t.Error("duplicates: the hostile title is not shown as text")
	}
	untouched("duplicates")
	shot("duplicates.png")

	// The pair of the harbour notes: the changed word highlighted on both
	// sides, the hostile title as text.
	// A pair page is opened by clicking a link: WaitVisible returns once
	// #distance is shown, which can be before the deferred labels.js has
	// attached its click handler (a click then does nothing, as seen under
	// load), so each such step also waits for the document to finish.
	loaded := chromedp.Poll[chromedp.Void](`document.readyState === "complete"`)
	do("open the pair", chromedp.Click(chromedp.CSS(`a.pair-link[href*="drop="]`)), chromedp.WaitVisible(chromedp.CSS("#distance")), loaded)
	if !strings.Contains(text("#drop-url"), "/harbour/") {
		// The first cluster (largest) is river-cleanup; open ours by search.
		do("search the pair", chromedp.Navigate(base+"/dups?q=harbour"), chromedp.Click(chromedp.CSS("a.pair-link")),
			chromedp.WaitVisible(chromedp.CSS("#distance")), loaded)
	}
	if got := text("#drop-text ins"); got != changedWord {
		t.Errorf("pair: highlighted word in the dropped text = %q, want %q", got, changedWord)
	}
	if n := eval(`document.querySelectorAll("#orig-text del").length`); n != 1 {
		t.Errorf("pair: %d highlighted runs in the stored text, want 1", n)
	}
	if got := text("#drop-title"); !strings.Contains(got, hostileMarkup) {
		t.Errorf("pair: title shown as %q, want it to contain the markup as text", got)
	}
	untouched("pair")
	// A label is kept by the click handler at once; the wait is for the
	// page's own refresh of the label's state (a lost click times out here).
	labelled := chromedp.Poll[chromedp.Void](`document.querySelector(".labelbar .label-state").textContent !== ""`)
	do("label duplicate", chromedp.Click(chromedp.CSS("#label-dup")), labelled)
	if got := text(".labelbar .label-state"); got != "labelled duplicate" {
		t.Errorf("pair: after clicking duplicate the label reads %q", got)
	}
	shot("pair.png")

	// Two more labels: the Chinese repost (a duplicate) and, as a person
	// may judge, the syndicated market report as not a duplicate.
	for _, l := range []struct{ q, button string }{{"/reposts/tea-garden", "#label-dup"}, {"/syndicated/market-prices", "#label-not"}} {
		do("label "+l.q, chromedp.Navigate(base+"/dups?q="+l.q), chromedp.Click(chromedp.CSS("a.pair-link")),
			chromedp.WaitVisible(chromedp.CSS("#distance")), loaded, chromedp.Click(chromedp.CSS(l.button)), labelled)
	}

	// Labels: three, downloaded as a pairs file.
	do("labels", chromedp.Navigate(base+"/labels"), chromedp.WaitVisible(chromedp.CSS("#download")))
	if n := eval(`document.querySelectorAll("#label-rows tr").length`); n != 3 {
		t.Errorf("labels page lists %d labels, want 3", n)
	}
	shot("labels.png")
	progress := chromedp.Events(bctx, browser.DownloadProgress)
	do("download", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: downloads, EventsEnabled: new(true)})
		return err
	}), chromedp.Click(chromedp.CSS("#download")))
	var pairsFile string
	for ev, err := range progress {
		if err != nil {
			t.Fatalf("waiting for the download: %v", err)
		}
		if ev.State == browser.DownloadProgressStateCanceled {
			t.Fatal("the download was cancelled")
		}
		if ev.State == browser.DownloadProgressStateCompleted {
			pairsFile = filepath.Join(downloads, ev.GUID)
			break
		}
	}

	// Distances: both histograms drawn with k marked.
	do("distances", chromedp.Navigate(base+"/distances"), chromedp.WaitVisible(chromedp.CSS("svg.chart")))
	if n := eval(`document.querySelectorAll("svg.chart line.k").length`); n != 2 {
		t.Errorf("distances: %d threshold lines, want 2", n)
	}
	if n := eval(`[...document.querySelectorAll("svg.chart rect.bar")].filter(r => r.getBBox().height > 0).length`); n < 2 {
		t.Errorf("distances: %d bars drawn, want some in each chart", n)
	}
	untouched("distances")
	shot("distances.png")

	// Failures and skips: the robots.txt-disallowed section is not
	// fetched, so it is not listed; the table is there.
	do("failures", chromedp.Navigate(base+"/failures?kind=skipped"), chromedp.WaitVisible(chromedp.CSS("table.failures")))
	if got := text("#skipped-count"); got == "" {
		t.Error("failures: no skipped count")
	}
	untouched("failures")
	shot("failures.png")

	// The labels, read by crawl eval.
	out, _, err := run(t, "", "eval", "--pairs", pairsFile, "--json")
	if err != nil {
		t.Fatalf("crawl eval --pairs %s: %v", pairsFile, err)
	}
	var res struct {
		Pairs         int `json:"pairs"`
		Duplicates    int `json:"duplicates"`
		NonDuplicates int `json:"non_duplicates"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("eval output: %v\n%s", err, out)
	}
	if res.Pairs != 3 || res.Duplicates != 2 || res.NonDuplicates != 1 {
		t.Errorf("crawl eval read %d pairs, %d duplicates, %d not; want 3, 2, 1", res.Pairs, res.Duplicates, res.NonDuplicates)
	}
	t.Logf("screenshots in %s", shots)
}

// startServe runs `crawl serve` on a free loopback port and returns its
// base URL and a func that stops it and checks its error.
func startServe(t *testing.T, data string) (string, func()) {
	t.Helper()
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	var errb strings.Builder
	m := &Main{Stdin: strings.NewReader(""), Stdout: pw, Stderr: &errb}
	done := make(chan error, 1)
	go func() {
		err := m.Run(ctx, []string{"serve", "--data", data, "--addr", "127.0.0.1:0"})
		pw.CloseWithError(fmt.Errorf("serve ended: %v", err))
		done <- err
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("crawl serve: %v (stderr: %s)", err, errb.String())
	}
	i := strings.Index(line, "http://")
	if i < 0 {
		cancel()
		t.Fatalf("crawl serve printed %q, want its URL", line)
	}
	base := strings.TrimSuffix(strings.Fields(line[i:])[0], "/")
	return base, func() {
		cancel()
		if err := <-done; !errors.Is(err, errServeStopped) {
			t.Errorf("crawl serve: %v, want %v", err, errServeStopped)
		}
	}
}
