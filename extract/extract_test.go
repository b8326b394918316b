package extract

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"strings"
	"testing"
)

var testURL = &url.URL{Scheme: "https", Host: "example.com", Path: "/a/page.html"}

func TestNotHTML(t *testing.T) {
	tests := []struct {
		name, contentType string
		body              []byte
	}{
		{"image type", "image/png", []byte("\x89PNG\r\n\x1a\n")},
		{"pdf type", "application/pdf", []byte("%PDF-1.7")},
		{"binary labelled html", "text/html", append([]byte("<html>"), make([]byte, 64)...)},
		{"control bytes labelled html", "text/html", bytes.Repeat([]byte{1, 2, 3, 4, 'a'}, 200)},
		{"sniffed gzip", "", []byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + strings.Repeat("x", 100))},
		{"png labelled html", "text/html", append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte("IDAT"), 50)...)},
		{"gzip labelled html", "text/html", []byte("\x1f\x8b\x08\x00" + strings.Repeat("x", 100))},
		{"linearized pdf labelled html", "text/html", []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Linearized 1 /L 12345 /O 3 >>\nendobj\n")},
		{"NULs in a binary header", "text/html", []byte("\x01\x02\x00\x03LZ" + strings.Repeat("abcdefgh", 20))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ExtractBytes(tt.body, tt.contentType, testURL, Options{})
			if !errors.Is(err, ErrNotHTML) {
				t.Fatalf("ExtractBytes = %v, %v; want ErrNotHTML", d, err)
			}
			if err.Error() == ErrNotHTML.Error() {
				t.Errorf("error %q carries no reason", err)
			}
		})
	}
}

// A page damaged by a few stray NULs is still a page: its text is kept.
// So is text that starts as some file formats do.
func TestTextIsNotBinary(t *testing.T) {
	for _, tc := range []struct{ name, contentType, body, want string }{
		{"stray NULs", "text/html", "<html><body><article><p>The ferry timetable\x00 changes on Monday,\x00 and the harbour\x00 office" +
			strings.Repeat(" has posted\x00 the new times by the pier", 4) + ".\x00</p></article></body></html>", "ferry timetable"},
		{"starts like a BMP", "text/plain", "BMW 3 Series review. The car handles well in town and on the motorway.", "BMW 3 Series"},
		{"starts like an MP3", "text/plain", "ID3 tags explained: title, artist and album fields in audio files.", "ID3 tags"},
		{"starts like a PDF", "text/html", "%PDF-1.7 is the version this guide describes, page by page.", "guide describes"},
	} {
		d, err := ExtractBytes([]byte(tc.body), tc.contentType, testURL, Options{})
		if err != nil {
			t.Errorf("%s: ExtractBytes: %v", tc.name, err)
			continue
		}
		if !strings.Contains(d.Text, tc.want) || strings.ContainsRune(d.Text, 0) {
			t.Errorf("%s: Text = %q, want %q and no NUL", tc.name, d.Text, tc.want)
		}
	}
}

// Random bytes labelled HTML are rejected as binary nearly always (about
// one body in a hundred and fifty has no telling byte in its first KiB).
func TestRandomBytesAreBinary(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	accepted := 0
	for range 1000 {
		b := make([]byte, 4096)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		if _, err := ExtractBytes(b, "text/html", testURL, Options{}); err == nil {
			accepted++
		}
	}
	if accepted > 20 {
		t.Errorf("%d of 1000 random bodies taken for HTML", accepted)
	}
}

func TestTruncated(t *testing.T) {
	body := "<html><body><p>" + strings.Repeat("word ", 1000) + "</p></body></html>"
	d, err := Extract(strings.NewReader(body), "text/html", testURL, Options{MaxBodySize: 100})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Truncated || d.Text == "" {
		t.Errorf("Truncated = %v, Text = %q; want true and some text", d.Truncated, d.Text)
	}
	d, err = Extract(strings.NewReader(body), "text/html", testURL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Truncated {
		t.Errorf("Truncated = true for a %d-byte body under the default limit", len(body))
	}
}

func TestXRobotsTag(t *testing.T) {
	tests := []struct {
		header            string
		noindex, nofollow bool
	}{
		{"", false, false},
		{"noindex", true, false},
		{"noindex, nofollow", true, true},
		{"none", true, true},
		{"otherbot: noindex", false, false},
		{"NOFOLLOW", false, true},
	}
	for _, tt := range tests {
		d, err := ExtractBytes([]byte("<p>hello</p>"), "text/html", testURL, Options{XRobotsTag: tt.header})
		if err != nil {
			t.Fatal(err)
		}
		if d.NoIndex != tt.noindex || d.NoFollow != tt.nofollow {
			t.Errorf("X-Robots-Tag %q: NoIndex, NoFollow = %v, %v; want %v, %v", tt.header, d.NoIndex, d.NoFollow, tt.noindex, tt.nofollow)
		}
	}
}

func TestHasMarker(t *testing.T) {
	tests := []struct {
		s    string
		want bool
	}{
		{"share-buttons", true},
		{"shareButtons", true},
		{"NavBar", true},
		{"comments-area", true},
		{"has-comments", false}, // a property of the element, not its role
		{"o-section--has-ads", false},
		{"TestReport__Section--Ads", false},
		{"comments--open", true},
		{"section--ads comments", true},
		{"no_caption", false},
		{"jslc isPaywall", false}, // a state: the article behind a paywall
		{"is-paywall-box paywall", true},
		{"comments-has-more", true},
		{"heading", false},
		{"header-title", false},
		{"shadow", false},
		{"loadMore", false},
		{"advice", false},
		{"entry-content", false},
		{"AD", true},
		{"", false},
	}
	for _, tt := range tests {
		if got := hasMarker(tt.s) != markNone; got != tt.want {
			t.Errorf("hasMarker(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
	for s, want := range map[string]mark{"entry share": markSoft, "date-posts": markSoft, "share comments": markHard, "post-date sidebar": markHard} {
		if got := hasMarker(s); got != want {
			t.Errorf("hasMarker(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestBoilerLine(t *testing.T) {
	for line, want := range map[string]bool{
		"Mehr zum Thema":                       true,
		"Foto: Anna Muster":                    true,
		"Kommentare geschlossen":               true,
		"segunda-feira, 22 de janeiro de 2018": true,
		"Dienstag, 6. Mai 2014":                true,
		"Lire aussi : la réforme":              true,
		"相关阅读":                                 true,
		"责任编辑：张三":                              true,
		"Impressum":                            true,
		"By Jane Doe":                          true,
		"Our editor writes about gardens and rivers. You can keep up with me on Twitter: @valley_ed":                             true,
		"More than two million people follow him on Instagram, where he posts a video from the farm every day.":                  false,
		"To view the full story, please subscribe to The Valley Ledger. You can choose an annual subscription or a weekly pass.": true,
		"By the time the court met, the decision had already been leaked to the press.":                                          false,
		"Comments on the draft were due in May, and the agency received several thousand of them.":                               false,
		"来源于民间的说法并不可靠":                false,
		"Tagsüber bleibt es trocken.": false,
		"print(x)":                    false,
		"The meeting on Monday 4 May": false,
	} {
		if got := boilerLine(line); got != want {
			t.Errorf("boilerLine(%q) = %v, want %v", line, got, want)
		}
	}
	if got := dropBoilerLines("Related\nShare"); got != "Related\nShare" {
		t.Errorf("a text of boilerplate lines only is kept, got %q", got)
	}
}

// A marker class on the article itself or on a wrapper holding most of the
// text never removes the article.
func TestArticleWithMarkerClassSurvives(t *testing.T) {
	para := "<p>" + strings.Repeat("The seals came back to the estuary after twenty years away. ", 8) + "</p>"
	for _, src := range []string{
		`<body class="has-comments">` + para + para + `</body>`,
		`<body><div id="comments-wrapper"><div class="post">` + para + para + `</div></div><div class="comment">nice</div></body>`,
		`<body><article class="post share">` + para + para + `</article></body>`,
	} {
		d, err := ExtractBytes([]byte(src), "text/html", testURL, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(d.Text, "seals came back") {
			t.Errorf("%.60s...: Text = %q, want the article", src, d.Text)
		}
	}
}

func TestNeverEmptyForVisibleText(t *testing.T) {
	for _, src := range []string{
		"hello world",
		"<div>just a div</div>",
		"<ul><li><a href='/a'>A</a></li><li><a href='/b'>B</a></li></ul>",
		"<table><tr><td>cell</td></tr></table>",
		"<nav><a href='/'>Home</a></nav><p>x</p>",
	} {
		d, err := ExtractBytes([]byte(src), "text/html", testURL, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if d.Text == "" {
			t.Errorf("%q: empty text", src)
		}
	}
}

// Hostile inputs finish with a result or an error, never a panic.
func TestBoundedWork(t *testing.T) {
	t.Parallel()
	// A text past both 2 MiB caps (maxTextBytes, maxReadabilityText) read
	// whole under a raised MaxBodySize takes every path the 30 MB one
	// does: 3 MB, as 30 MB takes 23 s under the race detector;
	// SIMCRAWL_BIG=1 runs 30 MB.
	hugeText := 3 << 20
	if os.Getenv("SIMCRAWL_BIG") == "1" {
		hugeText = 30 << 20
	}
	big := Options{MaxBodySize: 40 << 20}
	tests := []struct {
		name string
		body []byte
		o    Options
	}{
		{"20000 nested divs", []byte("<html><body>" + strings.Repeat("<div>x", 20000)), Options{}},
		{"20000 nested spans", []byte("<p>" + strings.Repeat("<span>y", 20000)), Options{}},
		{"20000 nested tables", []byte(strings.Repeat("<table><tr><td>z", 20000)), Options{}},
		{"20000 unclosed p", []byte(strings.Repeat("<p>para", 20000)), Options{}},
		{fmt.Sprintf("%d MB of text", hugeText>>20), []byte("<html><body><p>" + strings.Repeat("lorem ipsum dolor ", hugeText/18) + "</p></body></html>"), big},
		{"invalid utf-8", bytes.Repeat([]byte{0xC3, 0x28, 0xA0, 0xA1, 'a', 0xE2, 0x82}, 5000), Options{}},
		{"unterminated script", []byte("<p>before</p><script>" + strings.Repeat("x", 1<<20)), Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ExtractBytes(tt.body, "text/html", testURL, tt.o)
			if err != nil {
				t.Logf("error: %v", err)
				return
			}
			if d.Text == "" && tt.name != "unterminated script" {
				t.Errorf("empty text")
			}
		})
	}
}

func TestNilURL(t *testing.T) {
	if _, err := ExtractBytes([]byte("<p>x</p>"), "text/html", nil, Options{}); err == nil {
		t.Error("ExtractBytes with nil URL: want an error")
	}
}

// A page too deep for the tree builder still gets title, links (resolved
// against <base href>) and text from the tokenizer pass.
func TestDeepPageTokenizerPath(t *testing.T) {
	src := `<html><head><title>Deep</title><base href="https://cdn.example.org/m/"></head><body>` +
		strings.Repeat("<div>", 600) + `<p>inner text</p><a href="x.html#f">X</a><script>var hidden = 1;</script>`
	d, err := ExtractBytes([]byte(src), "text/html", testURL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "Deep" || d.Text != "inner text\nX" || !d.Fallback {
		t.Errorf("Title %q, Text %q, Fallback %v; want Deep, \"inner text\\nX\", true", d.Title, d.Text, d.Fallback)
	}
	if len(d.Links) != 1 || d.Links[0].URL != "https://cdn.example.org/m/x.html" {
		t.Errorf("Links = %+v, want one to https://cdn.example.org/m/x.html", d.Links)
	}
}

func TestXMLIsNotAPage(t *testing.T) {
	for _, ct := range []string{"application/xml", "application/rss+xml", "text/xml; charset=utf-8"} {
		if _, err := ExtractBytes([]byte(`<?xml version="1.0"?><rss></rss>`), ct, testURL, Options{}); !errors.Is(err, ErrNotHTML) {
			t.Errorf("content type %q: err = %v, want ErrNotHTML", ct, err)
		}
	}
}

func TestInvisibleCharactersDropped(t *testing.T) {
	a, err := ExtractBytes([]byte("<p>sea\u200bwall and soft\u00adhyphen</p>"), "text/html", testURL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Text != "seawall and softhyphen" {
		t.Errorf("Text = %q, want %q", a.Text, "seawall and softhyphen")
	}
}

// Own fixture: an article with a short photo credit, a long descriptive
// caption, a share bar inside the content div ("entry share"), a related
// heading, a comment prompt and a date line, in a sidebar-classed wrapper.
func TestArticleBoilerplateInsideContent(t *testing.T) {
	para := strings.Repeat("The valley council voted on Tuesday to reopen the old mill as a library. ", 4)
	src := `<html><body><div class="layout has-sidebar wrapper-sidebar"><article>
		<div class="entry share"><p>` + para + `</p>
		<figure><img src="a.jpg"><figcaption>Foto: Anna Muster</figcaption></figure>
		<figure><img src="b.jpg"><figcaption>The mill in 1910, when it still ground flour for the three villages of the valley, employed most of their families and ran its wheel on the river that now feeds the reservoir above the town.</figcaption></figure>
		<p>` + para + `</p>
		<p>segunda-feira, 22 de janeiro de 2018</p>
		<h3>Mehr zum Thema</h3>
		<p>Kommentare geschlossen</p></div>
	</article></div><div id="noscript-holder"><noscript>Please enable JavaScript.</noscript></div></body></html>`
	d, err := ExtractBytes([]byte(src), "text/html", testURL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"reopen the old mill", "The mill in 1910"} {
		if !strings.Contains(d.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, d.Text)
		}
	}
	for _, gone := range []string{"Anna Muster", "janeiro", "Mehr zum Thema", "Kommentare", "JavaScript"} {
		if strings.Contains(d.Text, gone) {
			t.Errorf("text keeps %q:\n%s", gone, d.Text)
		}
	}
}

// Own fixture: a shop page whose product description sits in a
// "tab-menu" of description tabs (a navigation marker), with less than
// half of the page's text; a real menu of links beside it still goes.
func TestProseInNavMarkedElementSurvives(t *testing.T) {
	para := strings.Repeat("The pale rosé smells of red berries and citrus and ends soft and long. ", 4)
	src := `<html><body><div class="menu"><a href="/a">Red wine</a> <a href="/b">White wine</a> <a href="/c">Sparkling</a></div>
		<div class="product"><h1>Valley Rosé 2015</h1><p>Price 7,49 € per bottle</p>
		<table class="details">` + strings.Repeat("<tr><td>Grape variety and region of origin</td><td>Zinfandel, Napa Valley, California</td></tr>", 8) + `</table></div>
		<div class="tab-menu--product"><a href="#d">Description</a> <a href="#r">Reviews</a>
		<div class="tab-content"><p>` + para + `</p><p>` + para + ` <a href="/lexicon/rose">Rosé</a></p></div></div>
		</body></html>`
	d, err := ExtractBytes([]byte(src), "text/html", testURL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Text, "smells of red berries") {
		t.Errorf("text lacks the description:\n%s", d.Text)
	}
	if strings.Contains(d.Text, "Sparkling") {
		t.Errorf("text keeps the menu:\n%s", d.Text)
	}
}

// Own fixture: related blocks whose headlines are not links (script-opened
// teasers) or whose links are too few to make the block link-dense: the
// headlines go with their heading, in Chinese and German; the heading of
// the next section, followed by prose, stays.
func TestRelatedHeadlinesDropped(t *testing.T) {
	zh := strings.Repeat("新修的图书馆周六开放，市民可以凭身份证免费借阅图书和期刊，馆内还设有儿童阅览区。", 4)
	de := strings.Repeat("Der Gemeinderat hat am Dienstag beschlossen, die alte Mühle als Bibliothek wieder zu öffnen. ", 3)
	for _, tt := range []struct {
		src        string
		want, gone []string
	}{
		{`<html><body><div class="content"><p>` + zh + `</p><p>` + zh + `</p>
			<section class="ymw-list"><h4><span>APP精彩推荐</span></h4><ul>
			<li><h5>谁说长腿就好看？本周囧图</h5><a class="open-app"></a></li>
			<li><h5>独家探营：背后的好声音</h5><a class="open-app"></a></li></ul></section>
			<section class="ymw-list"><h4><span>相关内容</span></h4><ul>
			<li><h5>江湖最新鲜 用爱帮助词条回家</h5></li>
			<li><h5>闲聊提到的问题专场答疑</h5></li></ul></section></div></body></html>`,
			[]string{"新修的图书馆"}, []string{"精彩推荐", "囧图", "好声音", "相关内容", "词条回家", "专场答疑"}},
		{`<html><body><article><p>` + de + `</p><p><b>Lesen Sie auch:</b></p>
			<p><a href="/x">Neue Radwege</a> im Kreis geplant</p><p>Schwimmbad öffnet im Mai wieder</p>
			<h2>Die Kosten</h2><p>` + de + `</p></article></body></html>`,
			[]string{"Der Gemeinderat", "Die Kosten"}, []string{"Lesen Sie auch", "Neue Radwege", "Schwimmbad"}},
	} {
		d, err := ExtractBytes([]byte(tt.src), "text/html", testURL, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(d.Text, w) {
				t.Errorf("text lacks %q:\n%s", w, d.Text)
			}
		}
		for _, g := range tt.gone {
			if strings.Contains(d.Text, g) {
				t.Errorf("text keeps %q:\n%s", g, d.Text)
			}
		}
	}
}
