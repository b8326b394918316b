package extract

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// The fast paths checked against the simple code they replace.

// nodeText is the text below n as links read it before linkText: every
// text node but those in script, style, noscript and template.
func nodeText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
		case html.ElementNode:
			switch n.Data {
			case "script", "style", "noscript", "template":
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func TestLinkTextIsCollapsedNodeText(t *testing.T) {
	docs := []string{
		`<a href=x> one  two<b>three</b>four <i> </i>five </a>`,
		"<a href=x>\u00a0nbsp\u3000ideographic\u0085nel\u2028ls\tx\vv\fy\r\n</a>",
		"<a href=x>nul\x00inside and \xff\xfe invalid</a>",
		`<a href=x><script>skip()</script>kept<style>.s{}</style><noscript>no</noscript></a>`,
		`<a href=x></a>`,
	}
	for _, src := range docs {
		root, err := html.Parse(strings.NewReader(src))
		if err != nil {
			t.Fatal(err)
		}
		a := firstElem(root, "a")
		if got, want := linkText(a), collapseSpace(nodeText(a)); got != want {
			t.Errorf("linkText(%q) = %q, want %q", src, got, want)
		}
	}
}

// The same on every anchor of the readability and gne-zh pages.
func TestQualityLinkTextIsCollapsedNodeTextCorpus(t *testing.T) {
	if testing.Short() || raceEnabled {
		// Pure functions: nothing for the race detector (see
		// TestQualityPrefiltersMissNoMatchCorpus).
		t.Skip("a parse of every corpus page; skipped with -short and -race")
	}
	for _, p := range corpusPages(t) {
		text, _, err := decode(p, "text/html")
		if err != nil {
			t.Fatal(err)
		}
		root, err := html.Parse(bytes.NewReader(text))
		if err != nil {
			continue
		}
		var walk func(*html.Node)
		walk = func(n *html.Node) {
			if n.Type == html.ElementNode && n.Data == "a" {
				if got, want := linkText(n), collapseSpace(nodeText(n)); got != want {
					t.Fatalf("linkText = %q, want %q", got, want)
				}
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
		}
		walk(root)
	}
}

// Every cookie note has "cookie" in it: boilerLine and creditLine look
// for the notes only in lines that do.
func TestCookieNotesSayCookie(t *testing.T) {
	for _, n := range cookieNotes {
		if !strings.Contains(n, "cookie") {
			t.Errorf("cookie note %q lacks \"cookie\"", n)
		}
	}
}
