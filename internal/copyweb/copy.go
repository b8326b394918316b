package copyweb

import (
	"fmt"
)

// copyOf makes a copy of kind k of page f. It reports false when k does
// not apply to f (GBK and Traditional need a Chinese page, removing a
// paragraph needs five of them).
func (b *builder) copyOf(k Kind, f *Page) (*Page, bool, error) {
	if k.zhOnly() && f.lang != "zh" {
		return nil, false, nil
	}
	p, err := parsePage(f.html)
	if err != nil {
		return nil, false, fmt.Errorf("copyweb: parse %s: %w", f.ID, err)
	}
	if p.content == nil {
		return nil, false, nil
	}
	s := snippetSets[f.lang]
	if s == nil {
		s = snippetSets["en"]
	}
	c := &Page{ID: b.id("c"), Kind: k, Cluster: f.Cluster, Of: f.ID, Source: f.Source,
		ContentType: utf8HTML, lang: f.lang}
	rendered := true
	switch k {
	case Mirror:
		c.html, rendered = f.html, false
	case Ads:
		p.injectAds(b.rng, s)
	case Counters:
		p.injectCounters(b.rng, s)
	case Comments:
		p.injectComments(b.rng, s)
	case Related:
		p.injectRelated(b.rng, s, b.links)
	case Retemplate:
		if c.html, err = p.retemplate(b.rng, f.lang, s, b.links); err != nil {
			return nil, false, err
		}
		rendered = false
	case Retitle, ShortRetitle:
		p.retitle(pick(b.rng, s.headlines))
	case EditWords:
		if p.editWords(b.rng, 0.01+0.02*b.rng.Float64(), 0.5) == 0 {
			return nil, false, nil
		}
	case DropParagraph:
		if !p.dropParagraph(b.rng) {
			return nil, false, nil
		}
	case Traditional:
		if err := p.convertText(traditional); err != nil {
			return nil, false, err
		}
	case Repost:
		p.sourceLine(s, f.lang, "https://news.example.com/a/"+f.ID)
	case GBKHeader, GBKMeta:
		c.html, rendered = f.html, false
		if c.Body, err = toGBK(f.html, k == GBKMeta); err != nil {
			return nil, false, err
		}
		c.ContentType = "text/html"
		if k == GBKHeader {
			c.ContentType = "text/html; charset=GBK"
		}
	default:
		return nil, false, fmt.Errorf("copyweb: no copy of kind %q", k)
	}
	c.Title = p.title() // a re-templated page keeps the title
	if rendered {
		c.html = p.render()
	}
	if c.Body == nil {
		c.Body = c.html
	}
	return c, true, nil
}
