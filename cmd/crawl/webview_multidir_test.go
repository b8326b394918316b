package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/internal/webview"
)

// TestServeSeveralDataDirsAsOneCrawl serves the workers' directories of
// splitCrawl as `crawl serve --data A --data B` does and reads the view
// over HTTP: the duplicates are the clusters of the same crawl in one
// directory, a worker's drop of the other worker's page included; that
// pair shows the page from the other directory, and its label downloads
// with that page's text; the overview sums the counts and names the
// directories. One worker's directory alone lists the drops whose page it
// lacks under their URL instead of as pages missing from its store.
func TestServeSeveralDataDirsAsOneCrawl(t *testing.T) {
	whole, workers := splitCrawl(t)
	wantOut, _ := mustRun(t, "dups", "--json", "--data", whole)
	want := groupURLs(decodeGroups(t, wantOut))
	const foreign, foreignPage = "http://mirror.example/article-1", "http://blog.example/article-1" // worker-b's drop of worker-a's page
	pageText := exportedRecords(t, whole)[foreignPage].Text

	base := serveView(t, workers...)
	t.Run("dups", func(t *testing.T) {
		body := viewGet(t, base+"/dups", http.StatusOK)
		got, links := viewClusters(t, body)
		if !equalGroups(got, want) {
			t.Errorf("the view's clusters of the workers:\n%v\nwant the whole crawl's:\n%v", got, want)
		}
		if links[foreign] == "" {
			t.Errorf("no compare link for %s", foreign)
		}
		for _, s := range []string{"missing from the store", "stored in none of the data directories read"} {
			if strings.Contains(body, s) {
				t.Errorf("the duplicates page of both workers says %q", s)
			}
		}
		dirs := textOf(t, body, "data-dirs")
		if !strings.Contains(dirs, "2 data directories read as one crawl: "+workers[0]+", "+workers[1]) {
			t.Errorf("the duplicates page says %q, want the directories read", dirs)
		}
		if !strings.Contains(body, "stored page 1 in <span class=\"data\">"+workers[0]+"</span>") {
			t.Errorf("the duplicates page does not name the directory of worker-a's page 1")
		}
	})

	t.Run("pair", func(t *testing.T) {
		_, links := viewClusters(t, viewGet(t, base+"/dups", http.StatusOK))
		body := viewGet(t, base+links[foreign], http.StatusOK)
		for id, want := range map[string]string{"orig-url": foreignPage, "orig-data": workers[0], "drop-url": foreign, "drop-data": workers[1]} {
			if got := textOf(t, body, id); got != want {
				t.Errorf("pair of %s: #%s = %q, want %q", foreign, id, got, want)
			}
		}
		words := strings.Fields(pageText)
		if orig := textOf(t, body, "orig-text"); !strings.HasPrefix(orig, strings.Join(words[:20], " ")) {
			t.Errorf("pair of %s: the stored page's text %.80q..., want worker-a's page's %.80q...", foreign, orig, pageText)
		}

		// The label's pairs file carries the same page's text.
		u, err := url.Parse(links[foreign])
		if err != nil {
			t.Fatal(err)
		}
		key := u.Query().Get("src") + ":" + u.Query().Get("drop")
		resp, err := http.PostForm(base+"/pairs.jsonl", url.Values{"labels": {`[{"key":"` + key + `","duplicate":true}]`}})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var line struct{ A, AURL, BURL string }
		if err := json.NewDecoder(resp.Body).Decode(&line); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("POST /pairs.jsonl %s: %s, %v", key, resp.Status, err)
		}
		if line.A != pageText {
			t.Errorf("pairs file of %s: a = %.80q..., want worker-a's page's text", foreign, line.A)
		}
	})

	t.Run("overview", func(t *testing.T) {
		body := viewGet(t, base+"/", http.StatusOK)
		for id, want := range map[string]string{"stored": "6", "dropped": "5"} {
			if got := textOf(t, body, id); got != want {
				t.Errorf("overview of both workers: %s %s, want %s (the sum)", id, got, want)
			}
		}
		if dirs := textOf(t, body, "data-dirs"); !strings.Contains(dirs, "2 data directories read as one crawl") {
			t.Errorf("overview says %q, want the directories read as one crawl", dirs)
		}
		for _, w := range workers {
			if !strings.Contains(body, "<tr><td><code>"+w+"</code></td><td>3</td>") {
				t.Errorf("overview lacks the row of %s with its 3 stored pages", w)
			}
		}
	})

	t.Run("one worker alone", func(t *testing.T) {
		base := serveView(t, workers[1])
		body := viewGet(t, base+"/dups", http.StatusOK)
		got, links := viewClusters(t, body)
		for _, page := range []string{foreignPage, "http://news.example/article-0"} {
			if len(got[page]) != 1 {
				t.Errorf("worker-b alone: cluster of %s = %v, want its one drop under the URL it names", page, got[page])
			}
		}
		if strings.Contains(body, "missing from the store") || strings.Contains(body, `id="data-dirs"`) {
			t.Errorf("worker-b alone: a page missing from the store, or several directories named")
		}
		if n := textOf(t, body, "elsewhere"); !strings.HasPrefix(n, "2 drops of pages stored in none of the data directories read") {
			t.Errorf("worker-b alone says %q, want the 2 drops whose page it lacks counted", n)
		}
		if body := viewGet(t, base+links[foreign], http.StatusNotFound); !strings.Contains(body, foreignPage+" is stored in none of the data directories read") {
			t.Errorf("worker-b alone: pair of %s does not say its page is stored elsewhere:\n%s", foreign, body)
		}
	})
}

// serveView serves the data directories dirs as `crawl serve` does, with
// the webview handler behind httptest, and returns its base URL.
func serveView(t *testing.T, dirs ...string) string {
	t.Helper()
	set, err := crawler.OpenDataSet(dirs, 0)
	if err != nil {
		t.Fatal(err)
	}
	view, err := webview.New(context.Background(), webview.Options{Sources: set.Dirs, K: 7})
	if err != nil {
		set.Close()
		t.Fatal(err)
	}
	srv := httptest.NewServer(view)
	t.Cleanup(func() {
		srv.Close()
		view.Close()
		if err := set.Close(); err != nil {
			t.Error(err)
		}
	})
	return srv.URL
}

// viewGet gets target and checks its status.
func viewGet(t *testing.T, target string, code int) string {
	t.Helper()
	resp, err := http.Get(target)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != code {
		t.Fatalf("GET %s = %s, want %d:\n%s", target, resp.Status, code, b)
	}
	return string(b)
}

// viewClusters reads the Duplicates page: each cluster's page URL (the
// heading's link, or its text for a page no directory stores) with its
// drops' URLs sorted, and each drop's compare link by its URL.
func viewClusters(t *testing.T, body string) (groups map[string][]string, links map[string]string) {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	groups, links = map[string][]string{}, map[string]string{}
	for _, sec := range findAll(doc, func(n *html.Node) bool { return n.Data == "section" && attr(n, "class") == "cluster" }) {
		h2 := findAll(sec, func(n *html.Node) bool { return n.Data == "h2" })[0]
		page := strings.Fields(nodeText(h2))[0]
		if a := findAll(h2, func(n *html.Node) bool { return n.Data == "a" }); len(a) > 0 {
			page = attr(a[0], "href")
		}
		for _, tr := range findAll(sec, func(n *html.Node) bool { return n.Data == "tr" && n.Parent.Data == "tbody" }) {
			u := nodeText(findAll(tr, func(n *html.Node) bool { return n.Data == "span" && attr(n, "class") == "url" })[0])
			groups[page] = append(groups[page], u)
			links[u] = attr(findAll(tr, func(n *html.Node) bool { return n.Data == "a" && attr(n, "class") == "pair-link" })[0], "href")
		}
		slices.Sort(groups[page])
	}
	return groups, links
}

// textOf returns the text of the element with id in body, or "".
func textOf(t *testing.T, body, id string) string {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if n := findAll(doc, func(n *html.Node) bool { return attr(n, "id") == id }); len(n) > 0 {
		return nodeText(n[0])
	}
	return ""
}

// findAll returns the element nodes under n that match, in document order.
func findAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && match(c) {
			out = append(out, c)
		}
		out = append(out, findAll(c, match)...)
	}
	return out
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// nodeText is the text under n, spaces collapsed.
func nodeText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}
