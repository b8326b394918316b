package extract

import (
	"bytes"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// Two copies of one text that differ only in counters and timestamps must
// normalise to the same string.
func TestNormalizeTextCopiesAgree(t *testing.T) {
	tests := []struct{ name, a, b string }{
		{"views", "Seals return\n1,234 views\nThe colony grew.", "Seals return\n1,301 views\nThe colony grew."},
		{"views label", "Views: 88\nThe colony grew.", "Views: 1.2k\nThe colony grew."},
		{"han reads", "阅读 12345\n海豹回来了。", "阅读 12399\n海豹回来了。"},
		{"han reads colon", "阅读量：1.2万 评论(35)\n海豹回来了。", "阅读量：3万 评论(40)\n海豹回来了。"},
		{"traditional", "閱讀 12\n海豹回來了。", "閱讀 99\n海豹回來了。"},
		{"updated", "Updated 3/4/2026 13:45\nThe colony grew.", "Updated 3/5/2026 9:02\nThe colony grew."},
		{"updated inline", "By Ann · Updated 3/4/2026 13:45 · The colony grew.", "By Ann · Updated 3/5/2026 08:15 · The colony grew."},
		{"ago", "Posted 2 hours ago\nThe colony grew.", "Posted 5 days ago\nThe colony grew."},
		{"an hour ago", "an hour ago · 14 comments\nThe colony grew.", "3 hours ago · 15 comments\nThe colony grew."},
		{"han update time", "更新时间：2026-11-02\n海豹回来了。", "更新时间：2026-11-03 10:20:00\n海豹回来了。"},
		{"han date", "发布于 2026年11月2日 08:00\n海豹回来了。", "发布于 2026年11月4日 17:45\n海豹回来了。"},
		{"han relative", "3小时前\n海豹回来了。", "刚刚\n海豹回来了。"},
		{"month name", "Published March 4, 2026 at 1:45 p.m. ET\nThe colony grew.", "Published March 5, 2026 at 9:00 a.m. ET\nThe colony grew."},
		{"day month", "4 March 2026\nThe colony grew.", "12 Mar 2026\nThe colony grew."},
		{"whitespace", "  The   colony\tgrew. \n\n\n It   did. ", "The colony grew.\nIt did."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := NormalizeText(tt.a), NormalizeText(tt.b)
			if a != b {
				t.Errorf("NormalizeText(%q) = %q\nNormalizeText(%q) = %q\nwant equal", tt.a, a, tt.b, b)
			}
			if a == "" {
				t.Errorf("NormalizeText(%q) is empty, want the article sentence kept", tt.a)
			}
		})
	}
}

// Numbers that are content, not counters, stay.
func TestNormalizeTextKeeps(t *testing.T) {
	tests := []string{
		"The ratio moved from 1.1:50.3:48.6 to 0.7:50.7:48.6.",
		"Forty-two seals, up from 12 in 2025.",
		"完成投资246.79亿元，同比增长15.3%。",
		"Chapter 3: the return.",
		"He scored 3 goals in 90 minutes.",
	}
	for _, s := range tests {
		if got := NormalizeText(s); got != s {
			t.Errorf("NormalizeText(%q) = %q, want it unchanged", s, got)
		}
	}
}

// The same article served twice with different counters and dates in the
// page chrome and in the article gives identical Document.Text.
func TestExtractCopiesAgree(t *testing.T) {
	const tmpl = `<html><body><div class="post"><h1>Seals</h1>
<p class="meta">Updated {{date}} · {{views}} views · {{ago}}</p>
<p>For the first time in twenty years a colony of harbour seals has been counted on the sandbanks at the mouth of the estuary, volunteers said after a survey at low tide.</p>
<p>The seals left when dredging disturbed the banks where they rest; since the terminal closed the banks have rebuilt themselves and fish stocks have recovered.</p>
<p>阅读 {{views}}</p></div></body></html>`
	fill := func(date, views, ago string) []byte {
		r := strings.NewReplacer("{{date}}", date, "{{views}}", views, "{{ago}}", ago)
		return []byte(r.Replace(tmpl))
	}
	u, _ := url.Parse("https://example.com/seals")
	a, err := ExtractBytes(fill("3/4/2026 13:45", "1,234", "2 hours ago"), "text/html", u, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ExtractBytes(fill("3/5/2026 08:10", "98,765", "1 day ago"), "text/html", u, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Text != b.Text {
		t.Errorf("texts differ:\n%s\n---\n%s", a.Text, b.Text)
	}
	if !strings.Contains(a.Text, "harbour seals") {
		t.Errorf("Text = %q, want the article", a.Text)
	}
}

// The scans in front of rxDate, rxCounter and rxLabel are necessary
// conditions: on a line they reject, the regexp must not match; and
// replaceDates, which runs rxDate on stretches of the line, replaces what
// rxDate on the whole line does. Checked on random lines
// built from the pieces the patterns are made of.
func TestPrefiltersMissNoMatch(t *testing.T) {
	// Single characters and words, and fragments of real dates and
	// counters so that matches are common.
	pieces := strings.Fields(`1 2 12 2026 123456 0.5 3/4 - / . , : ： 年 月 日 万 千 次阅读 人浏览 条评论 阅读 阅读量 評論 赞 数 人 次 ( （
		Jan march MAY sept. Sep dec th st nd k K m + views View READS comments likes Shares hits visits plays replies votes
		viewer reader the on of a ago 小时前 刚刚 ſ ſept K x _ é
		March_4 4th_March ,_2026 _2026 2026-11 11-02 2026_年 3/4/26 04.03. 11月2日 2_月_3_日
		Retrieved_on_4th_March_2026. (2016-01-01) abcMay_5 xmarch_3 Marché_4,_2026 2026abc ,_May_2,_2026_and_3_June_2026
		Updated_on Posted: posted_AT 发布时间： 更新於 last_updated 12_views 3k+_likes 1,234_comments Views:_88 阅读：12 阅读量：1.2万 （35） 12次阅读 3_万_人浏览 阅读人数 点击次数：`)
	for i, p := range pieces {
		pieces[i] = strings.ReplaceAll(p, "_", " ")
	}
	pieces = append(pieces, " ", "  ", "\t")
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	t.Logf("seed %d", seed)
	// The race detector has nothing concurrent to check here and slows it
	// tenfold: fewer lines under -race, all of them in the non-race pass.
	n := 20000
	if raceEnabled {
		n = 2000
	}
	for range n {
		var b strings.Builder
		for range 1 + rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		checkPrefilters(t, b.String())
	}
}

// The same on every line of the corpus pages' visible text.
func TestQualityPrefiltersMissNoMatchCorpus(t *testing.T) {
	if testing.Short() || raceEnabled {
		// Pure functions over every corpus page: nothing concurrent for the
		// race detector, which makes it ten times slower; CI runs
		// TestQuality* without -race.
		t.Skip("a parse of every corpus page; skipped with -short and -race")
	}
	pages := corpusPages(t)
	lines := 0
	for _, p := range pages {
		text, _, err := decode(p, "text/html")
		if err != nil {
			t.Fatal(err)
		}
		root, err := html.Parse(bytes.NewReader(text))
		if err != nil {
			continue // too deep; the tokenizer path renders no tree
		}
		for l := range strings.SplitSeq(renderText(root, nil), "\n") {
			// None of the patterns matches without a digit.
			if hasDigit(l) {
				checkPrefilters(t, l)
				lines++
			}
		}
	}
	t.Logf("%d pages, %d lines with digits", len(pages), lines)
}

func checkPrefilters(t *testing.T, l string) {
	t.Helper()
	if !maybeDate(l) && rxDate.MatchString(l) {
		t.Fatalf("maybeDate(%q) = false, but rxDate matches %q", l, rxDate.FindString(l))
	}
	if got, want := replaceDates(l, "\x00"), rxDate.ReplaceAllString(l, "\x00"); got != want {
		t.Fatalf("replaceDates(%q) = %q, want %q", l, got, want)
	}
	// rxCounter runs on the line with its dates replaced, rxLabel on the
	// line with dates and counters replaced.
	for _, s := range []string{l, rxDate.ReplaceAllString(l, "\x00")} {
		if !maybeCounter(s) && rxCounter.MatchString(s) {
			t.Fatalf("maybeCounter(%q) = false, but rxCounter matches %q", s, rxCounter.FindString(s))
		}
		s = rxCounter.ReplaceAllString(s, "\x00")
		if !maybeLabel(s) && rxLabel.MatchString(s) {
			t.Fatalf("maybeLabel(%q) = false, but rxLabel matches %q", s, rxLabel.FindString(s))
		}
	}
}
