package copyweb

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// A page whose inline gallery captions (one <p> each) outweigh the story,
// which is written in paragraphs too, as on readability/bug-1255978: our
// article heuristic takes the gallery, extraction the story. A rewrite
// must change the story all the same.
func TestRewriteChangesProseOutsideTheArticleBlock(t *testing.T) {
	story := "The harbour board voted on Tuesday to rebuild the northern pier before the winter storms arrive in force."
	caption := "A long caption describing the slide in the gallery, with the photographer's name and the place it was taken, and more words besides."
	var b strings.Builder
	b.WriteString(`<html><head><title>Pier</title></head><body><nav><a href="/">Home</a> <a href="/news">News</a></nav><div class="story">`)
	for range 3 {
		b.WriteString("<div>" + story + "</div>")
	}
	b.WriteString(`<div class="gallery">`)
	for range 8 {
		b.WriteString("<p>" + caption + "</p>")
	}
	b.WriteString(`</div></div></body></html>`)
	p, err := parsePage([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if p.content == nil || strings.Contains(textOf(p.content), "harbour") {
		t.Fatalf("the fixture's article block should be the gallery alone, got %q", textOf(p.content))
	}
	if n := p.rewrite(rand.New(rand.NewPCG(1, 2)), 0.35); n == 0 {
		t.Fatal("rewrite made no edits")
	}
	out := string(p.render())
	if strings.Count(out, story) == 3 {
		t.Errorf("rewrite left the story outside the article block unchanged:\n%s", out)
	}
	for _, nav := range []string{">Home<", ">News<"} {
		if !strings.Contains(out, nav) {
			t.Errorf("rewrite changed the short text %s: the template must stay", nav)
		}
	}
}
