package copyweb

import (
	"strings"
	"testing"
)

// The article's element takes in a lead paragraph kept in a block of its
// own beside the body's blocks (as on trafilatura/pages/fdpbt.de-*, whose
// body holds 80% of the paragraph text): a re-templated copy made of the
// body alone held a third of the text the original's extraction gives, and
// no crawl could call it a copy. A menu and a link list beside the article
// stay out, and a grid of teasers or a cookie dialog holding more
// paragraphs than the article does not take its place.
func TestContentNode(t *testing.T) {
	lead := "The three parliamentary groups ended the state of emergency on Thursday, presenting a joint paper."
	body := "The paper lets the states keep masks and access rules until March, and nothing that closes schools again."
	menu := `<nav><a href="/">Home</a> <a href="/news">News</a></nav>`
	links := `<div class="more"><a href="/a">One other story with a long headline</a> <a href="/b">Another story with a long headline</a> <a href="/c">A third story with a long headline</a></div>`
	for _, tc := range []struct {
		name, html string
		want       []string // in the article's element
		wantNot    []string
	}{
		{
			name: "lead beside the body",
			html: `<html><body>` + menu + `<main><div class="block"><div class="lead"><p>` + lead + `</p></div><div class="fields">` +
				strings.Repeat(`<div class="item"><p>`+body+`</p></div>`, 4) + `</div></div></main></body></html>`,
			want: []string{lead, body}, wantNot: []string{"Home"},
		},
		{
			name: "teaser grid outweighing the article",
			html: `<html><body>` + menu + `<main><div class="story">` + strings.Repeat(`<p>`+body+`</p>`, 3) + `</div><div class="grid">` +
				strings.Repeat(`<a href="/x" class="card"><p>`+lead+`</p></a><p><a href="/y">`+lead+`</a></p>`, 4) + `</div></main></body></html>`,
			want: []string{body}, wantNot: []string{lead},
		},
		{
			name: "cookie dialog outweighing the article",
			html: `<html><body>` + menu + `<main><div class="story">` + strings.Repeat(`<p>`+body+`</p>`, 3) + `</main>` +
				`<div id="cookie-modal" class="lity-hide"><div class="tab-content">` + strings.Repeat(`<p>`+lead+`</p>`, 6) + `</div></div></body></html>`,
			want: []string{body}, wantNot: []string{lead},
		},
		{
			name: "links beside the body",
			html: `<html><body>` + menu + `<main><div class="block">` + links + `<div class="fields">` +
				strings.Repeat(`<div class="item"><p>`+body+`</p></div>`, 4) + `</div></div></main></body></html>`,
			want: []string{body}, wantNot: []string{"Home", "another story"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := parsePage([]byte(tc.html))
			if err != nil {
				t.Fatal(err)
			}
			if p.content == nil {
				t.Fatal("no article element")
			}
			got := collapse(textOf(p.content))
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("article element %q lacks %q", got, w)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(strings.ToLower(got), strings.ToLower(w)) {
					t.Errorf("article element %q holds %q", got, w)
				}
			}
		})
	}
}
