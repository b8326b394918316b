package copyweb

import (
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/simcrawl/simcrawl/extract"
)

func TestTmpPair(t *testing.T) {
	src, _ := LoadCorpus(corpusDir)
	w, _ := Generate(src, Bounded)
	for _, id := range strings.Split(os.Getenv("IDS"), ",") {
		p := w.Page(id)
		u, _ := url.Parse("http://x/")
		d, _ := extract.ExtractBytes(p.Body, p.ContentType, u, extract.Options{})
		pg, _ := parsePage(p.html)
		t.Logf("%s %s extracted %d chars, para text %d\n%.1500s", id, p.Kind, len(d.Text), len(pg.paraText()), d.Text)
	}
}
