package demosite

import (
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// articleWordCount serves page i of g and counts the words of its article.
func articleWordCount(t *testing.T, g *Generated, i int) int {
	t.Helper()
	rec := httptest.NewRecorder()
	g.ServeHTTP(rec, httptest.NewRequest("GET", "/p/"+strconv.Itoa(i), nil))
	body := rec.Body.String()
	start := strings.Index(body, "<article>")
	end := strings.Index(body, "</article>")
	if start < 0 || end < start {
		t.Fatalf("page %d has no article: %.200s", i, body)
	}
	n := 0
	for _, para := range strings.Split(body[start:end], "<p>")[1:] {
		n += len(strings.Fields(strings.TrimSuffix(strings.TrimSpace(para), "</p>")))
	}
	return n
}

// A ShortShare of the articles are ShortWords long, the rest 480 words; a
// copy (with its added word) is as short as the page it copies.
func TestGeneratedShortShare(t *testing.T) {
	g := &Generated{N: 400, DupEvery: 10, ShortShare: 0.5, ShortWords: 120}
	short := 0
	for i := range g.N {
		n := articleWordCount(t, g, i)
		if g.IsDuplicate(i) {
			n-- // "Reposted."
		}
		switch n {
		case 120:
			short++
		case longWords:
		default:
			t.Fatalf("page %d: %d words, want 120 or %d", i, n, longWords)
		}
		if g.IsDuplicate(i) && n != articleWordCount(t, g, i-1) {
			t.Errorf("copy %d has %d words, its original %d", i, n, articleWordCount(t, g, i-1))
		}
	}
	if short < 150 || short > 250 {
		t.Errorf("%d of %d articles short, want about half", short, g.N)
	}
	if n := articleWordCount(t, &Generated{N: 10}, 3); n != longWords {
		t.Errorf("without ShortShare page 3 has %d words, want %d", n, longWords)
	}
}
