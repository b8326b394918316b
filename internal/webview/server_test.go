package webview

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// hostile is what a page may hold: an element, a script, and a quote that
// ends an attribute to start another.
const hostile = `<script>window.pwned=1</script><img src=x onerror="window.pwned=2">" onmouseover="window.pwned=3" x='`

func hostileTitle(i, j int) string { return fmt.Sprintf("%s title %d/%d", hostile, i, j) }
func hostileText(i, j int) string  { return plainText(i, j) + "\n" + hostile }

func get(t *testing.T, h http.Handler, target string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
	return rec.Code, rec.Body.String()
}

// TestPagesEscape renders every page over pages whose titles and texts
// hold markup and checks that the markup arrives as text: the parsed
// document has only the view's own script element and no event-handler
// attribute, and the hostile text is visible.
func TestPagesEscape(t *testing.T) {
	s := openView(t, fakeCrawl(t, 6, 3, hostileTitle, hostileText))
	for _, target := range []string{"/", "/dups", "/dups?sort=closeness&q=title", "/pair?src=0&drop=1", "/pair?src=0&drop=5",
		"/distances", "/failures", "/failures?kind=skipped", "/labels"} {
		t.Run(target, func(t *testing.T) {
			code, body := get(t, s, target)
			if code != http.StatusOK {
				t.Fatalf("GET %s = %d:\n%s", target, code, body)
			}
			doc, err := html.Parse(strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			scripts := 0
			var text strings.Builder
			var walk func(n *html.Node)
			walk = func(n *html.Node) {
				if n.Type == html.ElementNode {
					if n.Data == "script" {
						scripts++
					}
					if n.Data == "img" {
						t.Errorf("GET %s: an <img> element from a page's text", target)
					}
					for _, a := range n.Attr {
						if strings.HasPrefix(a.Key, "on") {
							t.Errorf("GET %s: <%s %s=%q>: an event handler from a page", target, n.Data, a.Key, a.Val)
						}
					}
				}
				if n.Type == html.TextNode {
					text.WriteString(n.Data)
				}
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c)
				}
			}
			walk(doc)
			if scripts != 1 {
				t.Errorf("GET %s: %d script elements, want 1 (the view's own)", target, scripts)
			}
			if strings.HasPrefix(target, "/dups") || strings.HasPrefix(target, "/pair") {
				if !strings.Contains(text.String(), "<script>window.pwned=1</script>") {
					t.Errorf("GET %s: the hostile title is not shown as text", target)
				}
			}
		})
	}
}

// TestDupsFilters checks the cluster and drop counts the Duplicates page
// shows under each filter, against counts worked out from fakeCrawl.
func TestDupsFilters(t *testing.T) {
	// 8 pages with 3 drops each: drop j of page i is (i+j)%4 bits away,
	// exact when 0.
	s := openView(t, fakeCrawl(t, 8, 3, plainTitle, plainText))
	tests := []struct {
		query            string
		clusters, drops  int
		firstClusterText string
	}{
		{"", 8, 24, ""},
		{"reason=exact", 6, 6, ""},
		{"reason=near", 8, 18, ""},
		{"min=3", 6, 6, ""},
		{"max=1&reason=near", 6, 6, ""},
		{"q=page/5", 1, 3, "Article 5 copy -1"},
		{"q=copy/5/2", 1, 1, ""},
		{"host=mirror1.example", 8, 8, ""},
	}
	for _, tc := range tests {
		code, body := get(t, s, "/dups?"+tc.query)
		if code != http.StatusOK {
			t.Fatalf("GET /dups?%s = %d", tc.query, code)
		}
		want := fmt.Sprintf(`<span id="cluster-count">%d</span>`, tc.clusters)
		if !strings.Contains(body, want) {
			t.Errorf("GET /dups?%s: want %d clusters; summary: %s", tc.query, tc.clusters, summary(body))
		}
		if want := fmt.Sprintf(`<span id="drop-count">%d</span>`, tc.drops); !strings.Contains(body, want) {
			t.Errorf("GET /dups?%s: want %d drops; summary: %s", tc.query, tc.drops, summary(body))
		}
		if tc.firstClusterText != "" && !strings.Contains(body, tc.firstClusterText) {
			t.Errorf("GET /dups?%s: no %q", tc.query, tc.firstClusterText)
		}
	}
	for _, bad := range []string{"reason=maybe", "min=x", "sort=random", "minsim=high"} {
		if code, _ := get(t, s, "/dups?"+bad); code != http.StatusBadRequest {
			t.Errorf("GET /dups?%s = %d, want 400", bad, code)
		}
	}
	for _, bad := range []string{"/pair?src=0&drop=9999", "/pair?src=3&drop=1", "/pair?drop=x", "/failures?kind=x"} {
		if code, _ := get(t, s, bad); code/100 != 4 {
			t.Errorf("GET %s = %d, want 4xx", bad, code)
		}
	}
}

func summary(body string) string {
	i := strings.Index(body, `<p class="summary">`)
	if i < 0 {
		return "(none)"
	}
	j := strings.Index(body[i:], "</p>")
	return body[i : i+j]
}

// TestPairsFile posts labels as the browser does and reads the file back
// as crawl eval would: texts of both pages and the label.
func TestPairsFile(t *testing.T) {
	s := openView(t, fakeCrawl(t, 2, 2, plainTitle, plainText))
	labels := `[{"key":"0:1","duplicate":true},{"key":"0:4","duplicate":false}]`
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/pairs.jsonl", strings.NewReader(url.Values{"labels": {labels}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("POST /pairs.jsonl = %d: %s", rec.Code, rec.Body)
	}
	if cd := rec.Header().Get("Content-Disposition"); !strings.Contains(cd, "attachment") {
		t.Errorf("Content-Disposition = %q, want an attachment", cd)
	}
	var lines []pairLine
	sc := bufio.NewScanner(io.Reader(rec.Body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l pairLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
	}
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2", len(lines))
	}
	if l := lines[0]; !l.Duplicate || l.A != plainText(0, -1) || l.B != plainText(0, 0) {
		t.Errorf("line 1 = %+v, want page 0's text, drop 1's text, duplicate", l)
	}
	if l := lines[1]; l.Duplicate || l.A != plainText(1, -1) || l.B != plainText(1, 1) {
		t.Errorf("line 2 = %+v, want page 1's text, drop 4's text, not duplicate", l)
	}
	for _, bad := range []string{`[]`, `nonsense`, `[{"key":"0:99","duplicate":true}]`, `[{"key":"7:1","duplicate":true}]`} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "/pairs.jsonl", strings.NewReader(url.Values{"labels": {bad}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		s.ServeHTTP(rec, req)
		if rec.Code/100 != 4 {
			t.Errorf("POST labels %s = %d, want 4xx", bad, rec.Code)
		}
	}
}
