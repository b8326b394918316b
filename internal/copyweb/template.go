package copyweb

import (
	"bytes"
	"fmt"
	"html/template"
	"math/rand/v2"

	"golang.org/x/net/html"
)

// The other sites' chrome a re-templated copy is moved into: our own
// navigation, sidebars and footers, three layouts.
var siteTemplates = []*template.Template{
	template.Must(template.New("portal").Parse(`<!DOCTYPE html>
<html lang="{{.Lang}}"><head><meta charset="utf-8"><title>{{.Title}} | {{.Site}}</title>
<link rel="stylesheet" href="/w?p=style"></head>
<body><header class="masthead"><a class="logo" href="/w?p=home">{{.Site}}</a>
<nav class="main-nav"><ul>{{range .Nav}}<li><a href="/w?p=home">{{.}}</a></li>{{end}}</ul></nav></header>
<div class="layout"><main><article class="story"><h1 class="headline">{{.Title}}</h1>
<div class="story-body">{{.Content}}</div></article></main>
<aside class="sidebar"><h2>{{.Related}}</h2><ol>{{range .Links}}<li><a href="{{.Path}}">{{.Title}}</a></li>{{end}}</ol></aside></div>
<footer><p>{{.Footer}}</p></footer></body></html>`)),
	template.Must(template.New("blog").Parse(`<!DOCTYPE html>
<html lang="{{.Lang}}"><head><meta charset="utf-8"><title>{{.Title}} — {{.Site}}</title></head>
<body class="post-template"><div id="top-bar">{{range .Nav}}<a href="/w?p=home">{{.}}</a> {{end}}</div>
<div id="wrap"><div id="content"><div class="post"><h2 class="post-title">{{.Title}}</h2>
<div class="entry">{{.Content}}</div>
<div class="share">Share: <a href="/w?p=home">Facebook</a> <a href="/w?p=home">X</a> <a href="/w?p=home">Email</a></div></div></div>
<div id="widgets"><div class="widget"><h3>{{.Related}}</h3><ul>{{range .Links}}<li><a href="{{.Path}}">{{.Title}}</a></li>{{end}}</ul></div></div></div>
<div id="footer">{{.Footer}}</div></body></html>`)),
	template.Must(template.New("table").Parse(`<html><head><meta http-equiv="Content-Type" content="text/html; charset=utf-8"><title>{{.Title}}_{{.Site}}</title></head>
<body><table width="960" align="center"><tr><td colspan="2" class="top">{{range .Nav}}<a href="/w?p=home">{{.}}</a> | {{end}}</td></tr>
<tr><td valign="top" width="680"><div class="titlebar"><h1>{{.Title}}</h1></div><div id="artibody">{{.Content}}</div></td>
<td valign="top" class="right"><div class="hot"><b>{{.Related}}</b>{{range .Links}}<p><a href="{{.Path}}">{{.Title}}</a></p>{{end}}</div></td></tr>
<tr><td colspan="2" class="bottom">{{.Footer}}</td></tr></table></body></html>`)),
}

var siteNames = map[string][]string{
	"zh": {"北岸资讯网", "江城晚报网", "今日视点"},
	"en": {"Northbank Daily", "Harbor Notes", "The Valley Ledger"},
}

// retemplate moves the article of p into one of our sites' chrome, under
// the page's title, with links to other pages of the web in the sidebar.
func (p *page) retemplate(rng *rand.Rand, lang string, s *snippets, links []link) ([]byte, error) {
	var content bytes.Buffer
	if err := html.Render(&content, p.content); err != nil {
		return nil, fmt.Errorf("copyweb: render article: %w", err)
	}
	names := siteNames["en"]
	if lang == "zh" {
		names = siteNames["zh"]
	}
	i := rng.IntN(len(siteTemplates))
	var side []struct{ Title, Path string }
	for range 6 {
		if len(links) > 0 {
			l := pick(rng, links)
			side = append(side, struct{ Title, Path string }{l.title, l.path})
		}
	}
	var out bytes.Buffer
	err := siteTemplates[i].Execute(&out, map[string]any{
		"Lang": lang, "Title": p.title(), "Site": names[i], "Links": side,
		"Nav": s.nav, "Related": s.related, "Footer": s.footer,
		"Content": template.HTML(content.String()),
	})
	if err != nil {
		return nil, fmt.Errorf("copyweb: template: %w", err)
	}
	return out.Bytes(), nil
}
