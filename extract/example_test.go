package extract_test

import (
	"fmt"
	"log"
	"net/url"
	"strings"

	"github.com/simcrawl/simcrawl/extract"
)

func ExampleExtract() {
	page := `<html lang="en"><head><title>Seals return</title>
<link rel="canonical" href="/seals"></head>
<body class="has-comments">
<nav><a href="/">Home</a> <a href="/news">News</a></nav>
<article>
<p>For the first time in twenty years, harbour seals have been counted on the sandbanks.</p>
<p class="meta">Updated 3/4/2026 13:45 · 1,234 views</p>
<ul><li>forty-two adults</li><li>six pups</li></ul>
<p>Read the <a href="/report.pdf#p2">survey report</a>.</p>
</article>
<div class="share"><a href="https://social.example/share" rel="nofollow">Share</a></div>
</body></html>`
	u, err := url.Parse("https://news.example.com/2026/03/seals.html")
	if err != nil {
		log.Fatal(err)
	}
	d, err := extract.Extract(strings.NewReader(page), "text/html; charset=utf-8", u, extract.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("title:", d.Title)
	fmt.Println("canonical:", d.CanonicalURL)
	fmt.Println("lang:", d.Lang, "charset:", d.Charset, "fallback:", d.Fallback)
	fmt.Println(d.Text)
	for _, l := range d.Links {
		fmt.Printf("link %s %q nofollow=%v\n", l.URL, l.Text, l.NoFollow)
	}
	// Output:
	// title: Seals return
	// canonical: https://news.example.com/seals
	// lang: en charset: utf-8 fallback: false
	// For the first time in twenty years, harbour seals have been counted on the sandbanks.
	// forty-two adults
	// six pups
	// Read the survey report.
	// link https://news.example.com/ "Home" nofollow=false
	// link https://news.example.com/news "News" nofollow=false
	// link https://news.example.com/report.pdf "survey report" nofollow=false
	// link https://social.example/share "Share" nofollow=true
}

func ExampleNormalizeText() {
	a := extract.NormalizeText("Seals return\nUpdated 3/4/2026 13:45 · 1,234 views\n阅读 12345")
	b := extract.NormalizeText("Seals return\nUpdated 3/5/2026 08:02 · 1,301 views\n阅读 12399")
	fmt.Printf("%q %v\n", a, a == b)
	// Output:
	// "Seals return" true
}
