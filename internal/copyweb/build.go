package copyweb

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

const utf8HTML = "text/html; charset=utf-8"

type builder struct {
	cfg      Config
	rng      *rand.Rand
	web      *Web
	links    []link // originals, for related boxes and sidebars
	clusters int
	n        map[string]int // pages made per ID prefix
}

func (b *builder) id(prefix string) string {
	if b.n == nil {
		b.n = map[string]int{}
	}
	b.n[prefix]++
	return fmt.Sprintf("%s%d", prefix, b.n[prefix])
}

func (b *builder) cluster() int { b.clusters++; return b.clusters }

// picker hands out the usable pages of a shuffled list, parsing each only
// when it is asked for, so that a small web does not parse the corpus.
type picker struct {
	srcs []Source
	seen *articleIndex // articles handed out by every picker
}

func (pk *picker) next() (candidate, bool) {
	for len(pk.srcs) > 0 {
		s := pk.srcs[0]
		pk.srcs = pk.srcs[1:]
		if c, ok := candidateOf(s); ok && !pk.seen.seen(shingles(c.text)) {
			return c, true
		}
	}
	return candidate{}, false
}

func (b *builder) build(sources []Source) error {
	// Pages with many Han characters are drawn from first for the Chinese
	// third; the others make the rest.
	var tmplSrc, zhLike, rest []Source
	for _, s := range sources {
		switch {
		case s.Template != "":
			tmplSrc = append(tmplSrc, s)
		case hanRunes(s.HTML, 300) == 300:
			zhLike = append(zhLike, s)
		default:
			rest = append(rest, s)
		}
	}
	seen := &articleIndex{}
	// Every page on a shared template is kept, as the hardest negative;
	// copies are made of those whose article we found.
	var tmpl, zh, other []candidate
	copyable := map[string]bool{}
	for _, s := range tmplSrc {
		c, ok := candidateOf(s)
		copyable[s.ID] = ok && !seen.seen(shingles(c.text))
		tmpl = append(tmpl, c)
	}
	zhPick := &picker{srcs: shuffled(b.rng, zhLike), seen: seen}
	otherPick := &picker{srcs: shuffled(b.rng, rest), seen: seen}
	// take draws a Chinese page from zhPick (others it meets go to other),
	// or any page from otherPick.
	take := func(wantZh bool) (candidate, bool) {
		if !wantZh {
			return otherPick.next()
		}
		for c, ok := zhPick.next(); ok; c, ok = zhPick.next() {
			if c.lang == "zh" {
				return c, true
			}
			other = append(other, c)
		}
		return candidate{}, false
	}
	// Short pages come from pages that are not originals, so that no
	// short page is an excerpt of another page of the web.
	var shorts []candidate
	for i := 0; len(shorts) < b.cfg.ShortPages && i < 2*b.cfg.ShortPages+2; i++ {
		if c, ok := take(i%3 == 0); ok { // a third Chinese: the corpus has few
			shorts = append(shorts, c)
		}
	}
	n := b.cfg.Originals
	if n == 0 {
		n = len(sources)
	}
	for len(zh) < n/3 {
		c, ok := take(true)
		if !ok {
			break
		}
		zh = append(zh, c)
	}
	for len(zh)+len(other) < n {
		c, ok := take(false)
		if !ok {
			break
		}
		other = append(other, c)
	}
	var originals []*Page
	for _, c := range slices.Concat(tmpl, zh, other) {
		kind, ok := Original, true
		if c.src.Template != "" {
			kind, ok = SameTemplate, copyable[c.src.ID]
		}
		p := &Page{ID: b.id("o"), Kind: kind, Cluster: b.cluster(), Source: c.src.ID, Title: c.title,
			Body: c.src.HTML, ContentType: utf8HTML, html: c.src.HTML, lang: c.lang, copyable: ok}
		if err := b.web.add(p); err != nil {
			return err
		}
		originals = append(originals, p)
		b.links = append(b.links, link{p.Title, p.Path()})
	}
	shortPages, err := b.shortPages(shorts)
	if err != nil {
		return err
	}
	var copies []*Page
	for _, k := range CopyKinds {
		if k == Chain || k == ShortRetitle {
			continue
		}
		made, err := b.copies(k, originals, b.cfg.PerKind)
		if err != nil {
			return err
		}
		copies = append(copies, made...)
	}
	if err := b.chains(copies); err != nil {
		return err
	}
	if err := b.rewrites(originals); err != nil {
		return err
	}
	if _, err := b.copies(ShortRetitle, shortPages, b.cfg.PerKind); err != nil {
		return err
	}
	return b.indexPages()
}

// copies makes up to n copies of kind k, each of another page of from.
func (b *builder) copies(k Kind, from []*Page, n int) ([]*Page, error) {
	var out []*Page
	for _, f := range shuffled(b.rng, from) {
		if len(out) == n {
			break
		}
		if !f.copyable {
			continue
		}
		p, ok, err := b.copyOf(k, f)
		if err != nil {
			return nil, err
		}
		if ok {
			if err := b.web.add(p); err != nil {
				return nil, err
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// chains makes PerKind copies of copies: a second transformation, of
// another kind, of a copy that is still UTF-8.
func (b *builder) chains(copies []*Page) error {
	second := []Kind{Ads, Counters, Comments, Related, Retemplate, Retitle, EditWords, Repost}
	made := 0
	for _, c := range shuffled(b.rng, copies) {
		if made == b.cfg.PerKind {
			break
		}
		if c.Kind == GBKHeader || c.Kind == GBKMeta || c.Kind == Mirror {
			continue
		}
		k := pick(b.rng, second)
		if k == c.Kind {
			continue
		}
		p, ok, err := b.copyOf(k, c)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		p.Kind = Chain
		if err := b.web.add(p); err != nil {
			return err
		}
		made++
	}
	return nil
}

// rewrites makes PerKind pages with 30-40% of an original's words
// changed: different texts, each its own cluster.
func (b *builder) rewrites(originals []*Page) error {
	var from []*Page
	for _, o := range originals {
		if o.copyable {
			from = append(from, o)
		}
	}
	for _, o := range shuffled(b.rng, from)[:min(len(from), b.cfg.PerKind)] {
		p, err := parsePage(o.html)
		if err != nil {
			return fmt.Errorf("copyweb: parse %s: %w", o.ID, err)
		}
		p.rewrite(b.rng, 0.30+0.10*b.rng.Float64())
		out := p.render()
		if err := b.web.add(&Page{ID: b.id("r"), Kind: Rewrite, Cluster: b.cluster(), Source: o.Source,
			Title: p.title(), Body: out, ContentType: utf8HTML, html: out, lang: o.lang}); err != nil {
			return err
		}
	}
	return nil
}
