package copyweb

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Our own fixture articles: sentences assembled from word lists, on one
// small template, so that tests run without the corpus.
var (
	fxSubjects = []string{"The council", "A local farmer", "The river authority", "Our reporter", "The school board", "A group of volunteers", "The mayor", "Shop owners"}
	fxVerbs    = []string{"announced", "questioned", "welcomed", "postponed", "described", "measured", "rejected", "celebrated"}
	fxObjects  = []string{"the new bridge plan", "the autumn harvest", "a flood warning", "the library budget", "the night market", "a cycling route", "the water prices", "the harbour repairs"}
	fxTails    = []string{"on Monday evening", "after a long debate", "despite the rain", "for the third time this year", "with some reservations", "in front of a large crowd"}
	zhSubjects = []string{"市政府", "当地农民", "河道管理局", "本报记者", "教育部门", "志愿者们", "市长", "商户代表"}
	zhVerbs    = []string{"宣布了", "质疑了", "欢迎", "推迟了", "介绍了", "测量了", "否决了", "庆祝了"}
	zhObjects  = []string{"新桥建设方案", "秋季收成", "洪水预警", "图书馆预算", "夜市开放时间", "自行车道规划", "水价调整", "港口维修工程"}
	zhTails    = []string{"周一晚间", "经过长时间讨论后", "冒雨", "今年第三次", "有所保留地", "在众多市民面前"}
)

// fixtureArticle is article number n in "en" or "zh": eight paragraphs of
// four sentences in a page with navigation and a footer.
func fixtureArticle(lang string, n int) Source {
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html><html lang=%q><head><meta charset=\"utf-8\"><title>Fixture story %d</title></head><body>", lang, n)
	b.WriteString(`<nav><a href="/">Home</a> <a href="/news">News</a></nav><article><h1>Fixture story</h1>`)
	rng := rand.New(rand.NewPCG(uint64(n), 1)) // each article its own sentences
	for range 8 {
		b.WriteString("<p>")
		for range 4 {
			if lang == "zh" {
				fmt.Fprintf(&b, "%s%s%s%s，涉及%d户居民。", pick(rng, zhSubjects), pick(rng, zhTails), pick(rng, zhVerbs), pick(rng, zhObjects), 10+rng.IntN(900))
			} else {
				fmt.Fprintf(&b, "%s %s %s %s, said %d residents. ", pick(rng, fxSubjects), pick(rng, fxVerbs), pick(rng, fxObjects), pick(rng, fxTails), 10+rng.IntN(900))
			}
		}
		b.WriteString("</p>")
	}
	b.WriteString(`</article><footer>Fixture Gazette, 1 Example Street</footer></body></html>`)
	return Source{ID: fmt.Sprintf("fixture/%s-%d.html", lang, n), HTML: []byte(b.String())}
}

func fixtureSources(n int) []Source {
	var out []Source
	for i := range n {
		out = append(out, fixtureArticle("en", i), fixtureArticle("zh", i))
	}
	return out
}
