package copyweb_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/simcrawl/simcrawl/internal/copyweb"
)

// Build a web of copies from two articles of our own and count its pages
// by kind.
func ExampleGenerate() {
	stories := map[string]string{
		"the harbour": "Repairs to pier %d of the harbour began on day %d, and the crews counted %d broken planks before noon while gulls watched from the cranes.",
		"the orchard": "In row %d of the orchard the pickers filled %d crates by lunchtime, and the cider press on the hill ran until %d minutes past six.",
	}
	var sources []copyweb.Source
	for i, topic := range []string{"the harbour", "the orchard"} {
		var b strings.Builder
		b.WriteString("<html><head><title>News about " + topic + "</title></head><body><nav>Home · News</nav><article>")
		for p := range 6 {
			b.WriteString("<p>")
			for s := range 3 {
				fmt.Fprintf(&b, stories[topic]+" ", p+1, 3*p+s, 7*p+s+11)
			}
			b.WriteString("</p>")
		}
		b.WriteString("</article><footer>Example Gazette</footer></body></html>")
		sources = append(sources, copyweb.Source{ID: fmt.Sprintf("own/%d.html", i), HTML: []byte(b.String())})
	}
	w, err := copyweb.Generate(sources, copyweb.Config{Seed: 1, PerKind: 1, ShortPages: 1})
	if err != nil {
		log.Fatal(err)
	}
	count := map[copyweb.Kind]int{}
	for _, p := range w.Pages {
		count[p.Kind]++
	}
	fmt.Println("originals:", count[copyweb.Original], "mirrors:", count[copyweb.Mirror], "retemplated:", count[copyweb.Retemplate],
		"GBK:", count[copyweb.GBKHeader], "index pages:", count[copyweb.Index])
	fmt.Println("the home page links every index page:", strings.Contains(string(w.Page(copyweb.HomeID).Body), "/w?p=i1"))
	// Output:
	// originals: 1 mirrors: 1 retemplated: 1 GBK: 0 index pages: 2
	// the home page links every index page: true
}
