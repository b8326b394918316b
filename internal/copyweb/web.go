package copyweb

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Config says how big a web Generate builds. The same Config and corpus
// give the same web, byte for byte.
type Config struct {
	Seed uint64
	// Originals is the number of corpus pages, beyond the pages that share
	// a template (always all taken), that copies are made of; about a third
	// Chinese. 0 takes every usable page.
	Originals int
	// PerKind is the number of pages made of each kind of copy, and of
	// rewrites; ShortPages the number of short pages (their retitled
	// copies are PerKind more).
	PerKind, ShortPages int
}

// A Page is one page of the web and its ground truth.
type Page struct {
	ID          string // the p= parameter of its URL: /w?p=ID
	Kind        Kind
	Cluster     int    // pages of one cluster are copies of one article; a kept kind's page has its own unless it is an original with copies
	Of          string // ID of the page this one was made from ("" unless a copy)
	Source      string // corpus page behind it ("" for index pages)
	Title       string
	Body        []byte
	ContentType string

	html     []byte // the UTF-8 page before any re-encoding, for copies of copies
	lang     string
	copyable bool // an original whose article we found: copies are made of it
}

// Path is the page's path and query on the server.
func (p *Page) Path() string { return "/w?p=" + p.ID }

// A Web is a generated site of pages and the ground truth about them.
type Web struct {
	Pages []*Page // in the order the index pages list them (home first)
	byID  map[string]*Page
}

// Page returns the page with the given ID, or nil.
func (w *Web) Page(id string) *Page { return w.byID[id] }

// HomeID is the ID of the seed page, which links to every index page.
const HomeID = "home"

// candidate is a corpus page good for making copies of.
type candidate struct {
	src   Source
	lang  string
	paras int
	title string
	text  string // the article's paragraphs, to leave out an article seen before
}

// candidateOf reports whether s is good for making copies of: an article
// of at least three paragraphs and 150 words (300 Han characters), which
// hold most of its text (edits change paragraphs) and a tenth of the
// page's, and no noindex.
//
// The candidate is filled in whenever the page parses, for pages kept as
// negatives whatever their shape.
func candidateOf(s Source) (candidate, bool) {
	p, err := parsePage(s.HTML)
	if err != nil {
		return candidate{src: s, lang: "en"}, false
	}
	if p.content == nil {
		txt := collapse(textOf(p.root))
		return candidate{src: s, lang: language(p.root, txt), title: p.title(), text: txt}, false
	}
	txt, paras := collapse(textOf(p.content)), collapse(p.paraText())
	long := len(strings.Fields(paras)) >= 150
	if !spaced(paras) {
		long = utf8.RuneCountInString(paras) >= 300
	}
	// The paragraphs hold most of the article's element and a tenth of the
	// page: an article written in <div>s and <br>s is not the element we
	// found, and edits to it would miss the article.
	mostly := len(paras)*10 >= len(txt)*7 && len(paras)*10 >= len(collapse(textOf(p.root)))
	c := candidate{src: s, lang: language(p.root, paras), paras: len(p.paras), title: p.title(), text: paras}
	return c, len(p.paras) >= 3 && long && mostly && !noindex(p.root)
}

// hanRunes counts the Han characters of b, up to limit.
func hanRunes(b []byte, limit int) int {
	n := 0
	for i := 0; i < len(b) && n < limit; {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		i += size
		if unicode.Is(unicode.Han, r) {
			n++
		}
	}
	return n
}

func noindex(root *html.Node) bool {
	found := false
	walk(root, func(n *html.Node) bool {
		if n.DataAtom == atom.Meta {
			var robots, content bool
			for _, a := range n.Attr {
				robots = robots || a.Key == "name" && strings.EqualFold(a.Val, "robots")
				content = content || a.Key == "content" && strings.Contains(strings.ToLower(a.Val), "noindex")
			}
			found = found || robots && content
		}
		return !found
	})
	return found
}

// language is "zh" for mostly Han text, else the <html lang> primary tag
// when we have snippets for it, else "en".
func language(root *html.Node, txt string) string {
	if hanShare(txt) > 0.5 {
		return "zh"
	}
	if h := find(root, atom.Html); h != nil {
		for _, a := range h.Attr {
			if a.Key == "lang" {
				tag := strings.ToLower(strings.SplitN(strings.SplitN(a.Val, "-", 2)[0], "_", 2)[0])
				if _, ok := snippetSets[tag]; ok && tag != "zh" {
					return tag
				}
			}
		}
	}
	return "en"
}

// Generate builds the web from the corpus pages: originals, copies of every
// kind, rewrites, short pages and index pages, deterministic from cfg.
func Generate(sources []Source, cfg Config) (*Web, error) {
	b := &builder{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x636f7079)), web: &Web{byID: map[string]*Page{}}}
	if err := b.build(sources); err != nil {
		return nil, err
	}
	return b.web, nil
}

// shuffled returns a shuffled copy of xs.
func shuffled[T any](rng *rand.Rand, xs []T) []T {
	out := slices.Clone(xs)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func (w *Web) add(p *Page) error {
	if w.byID[p.ID] != nil {
		return fmt.Errorf("copyweb: page %s made twice", p.ID)
	}
	w.byID[p.ID] = p
	w.Pages = append(w.Pages, p)
	return nil
}

// WriteTruth writes the ground truth as tab-separated lines: ID, kind,
// cluster, the ID it was made from ("-" for none), the corpus source ("-"
// for none) and the title. Pages of one cluster are copies of each other.
func (w *Web) WriteTruth(out io.Writer) error {
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	bw := bufio.NewWriter(out)
	fmt.Fprintln(bw, "id\tkind\tcluster\tof\tsource\ttitle")
	for _, p := range w.Pages {
		fmt.Fprintf(bw, "%s\t%s\t%d\t%s\t%s\t%s\n", p.ID, p.Kind, p.Cluster, dash(p.Of), dash(p.Source), strings.ReplaceAll(p.Title, "\t", " "))
	}
	return bw.Flush()
}
