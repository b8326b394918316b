package extract

import (
	"strings"
	"testing"
)

// A line holding a bracketed call to action ("【点击投票】", "【查看详情】")
// is a promotion and goes; a bracketed label of the article stays.
func TestPromoLineDropped(t *testing.T) {
	para := "<p>" + strings.Repeat("山区的茶园今年春天第一次向游客开放，村民们在山路两旁搭起了茶摊，来往的游客可以品尝新采的绿茶。", 4) + "</p>"
	src := `<html><head><title>茶园开放</title></head><body><article><h1>茶园开放</h1>` +
		`<p>【编者按】今年春天，记者走进山区茶园，看村民如何迎接第一批游客。</p>` + para +
		`<p>“2018十大经济年度人物评选”火热进行中！【点击投票】Pick你心目中的商业领袖</p>` + para +
		`<p>【查看详情】</p><p>更多茶园故事 【进入专题】</p></article></body></html>`
	d, err := ExtractBytes([]byte(src), "text/html", testURL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, promo := range []string{"点击投票", "查看详情", "进入专题"} {
		if strings.Contains(d.Text, promo) {
			t.Errorf("the promo %q is in the text:\n%s", promo, d.Text)
		}
	}
	if !strings.Contains(d.Text, "【编者按】今年春天") || !strings.Contains(d.Text, "山区的茶园今年春天") {
		t.Errorf("the article's text lost:\n%s", d.Text)
	}
}
