package extract

import (
	"regexp"
	"strings"
	"unicode"
)

// Counters and timestamps differ between two copies of one article (a
// mirror fetched an hour later shows "1,235 views" and "3 hours ago"), so
// they are cut out of the text before it is fingerprinted. Dates are
// removed wherever they appear, also inside sentences: losing "on
// 2026-03-04" from a sentence costs the fingerprint nothing, keeping an
// "Updated" line costs a false negative.
var (
	monthName = `(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?`
	rxDate    = regexp.MustCompile(`(?i)` +
		`\d{4}\s*[-/.年]\s*\d{1,2}\s*[-/.月]\s*\d{1,2}\s*日?` + // 2026-11-02, 2026年11月2日
		`|\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b` + // 3/4/2026, 04.03.26
		`|\b` + monthName + `\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}\b` + // March 4, 2026
		`|\b\d{1,2}(?:st|nd|rd|th)?\s+` + monthName + `,?\s+\d{4}\b` + // 4 March 2026
		`|\d{1,2}\s*月\s*\d{1,2}\s*日`) // 11月2日
	// rxTime matches a clock time with what surrounds it, so that
	// isClock can tell "13:45" from the ratio "1.0:29.4:69.6".
	rxTime  = regexp.MustCompile(`(?i)[\d.:]*\d:\d{2}[\d.:]*(?:\s*[ap]\.?m\.?)?(?:\s*(?:utc|gmt|[ecmp][sd]?t|[+-]\d{2}:?\d{2}))?\b`)
	rxClock = regexp.MustCompile(`^\d{1,2}:\d{2}(?::\d{2})?$`)
	rxAgo   = regexp.MustCompile(`(?i)` +
		`\b(?:\d+|an?|one)\s+(?:sec(?:ond)?|min(?:ute)?|h(?:ou)?r|day|week|month|year)s?\s+ago\b` +
		`|\d+\s*(?:秒|秒钟|分钟|小时|个小时|天|周|个月|年)前|刚刚`)
	rxCounter = regexp.MustCompile(`(?i)` +
		`\b\d[\d,.]*\s*[km]?\+?\s*(?:views?|reads?|comments?|likes?|shares?|hits|visits|plays|replies|votes)\b` +
		`|\b(?:views?|reads?|comments?|likes?|shares?|hits|visits|replies)\s*[:：]?\s*\d[\d,.]*[km]?\b` +
		`|(?:阅读|浏览|点击|评论|点赞|分享|收藏|转发|播放|参与|赞|閱讀|瀏覽|點擊|評論|點讚|轉發|參與|讚)(?:数|量|次数|人数)?\s*[:：]?\s*[(（]?\s*\d[\d,.]*\s*[万千]?\s*[)）]?\s*[次人条]?` +
		`|\d[\d,.]*\s*[万千]?\s*(?:次阅读|次浏览|人阅读|人浏览|次播放|条评论|人参与|人收藏|次点击|次閱讀|次瀏覽|人閱讀|條評論|人參與|次點擊)`)
	// rxLabel is a label left dangling by a removed date or counter.
	rxLabel = regexp.MustCompile(`(?i)` +
		`(?:\b(?:last\s+)?(?:updated|published|posted|modified|edited|created)(?:\s+(?:on|at))?` +
		`|更新时间|更新于|发布时间|发布于|发表于|发表时间|时间|日期|更新時間|更新於|發佈時間|發布時間|發表於|發表時間|時間)\s*[:：]?\s*` + "\x00")
)

// Substrings without which the corresponding pattern cannot match.
var (
	monthWords   = strings.Fields("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec jan feb mar apr may jun jul aug sep oct nov dec JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC")
	agoWords     = strings.Fields("ago AGO Ago 前 刚刚")
	counterWords = strings.Fields(`iew IEW ead EAD omment OMMENT ike IKE hare HARE its ITS isit ISIT lay LAY epl EPL ote OTE
		阅 浏 点 评 赞 享 藏 转 播 参 閱 瀏 點 評 讚 轉 參`)
)

// maybeDate reports whether l has a digit-separator-digit sequence, a
// 年 or 月, or a four-digit year with a month name.
func maybeDate(l string) bool {
	if nearDigit(l, "-", 1, 1) || nearDigit(l, "/", 1, 1) || nearDigit(l, ".", 1, 1) ||
		strings.Contains(l, "年") || strings.Contains(l, "月") {
		return true
	}
	return containsAny(l, monthWords) && hasDigitRun(l, 4)
}

// nearDigit reports whether some occurrence of sub has a digit within
// before bytes before it and within after bytes after it.
func nearDigit(l, sub string, before, after int) bool {
	for i := 0; ; {
		j := strings.Index(l[i:], sub)
		if j < 0 {
			return false
		}
		at := i + j
		if hasDigit(l[max(0, at-before):at]) && hasDigit(l[at+len(sub):min(len(l), at+len(sub)+after)]) {
			return true
		}
		i = at + len(sub)
	}
}

// nearDigitAny reports whether some occurrence of one of subs has a digit
// within 24 bytes on either side (counters: "1,234 views", "阅读：12").
func nearDigitAny(l string, subs []string) bool {
	for _, sub := range subs {
		for i := 0; ; {
			j := strings.Index(l[i:], sub)
			if j < 0 {
				break
			}
			at := i + j
			if hasDigit(l[max(0, at-24):min(len(l), at+len(sub)+24)]) {
				return true
			}
			i = at + len(sub)
		}
	}
	return false
}

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

func hasDigitRun(s string, n int) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			if run++; run >= n {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// NormalizeText is the normalisation applied to Document.Text: it removes
// counters ("1,234 views", "阅读 12345"), dates and times ("Updated
// 3/4/2026 13:45", "更新时间：2026-11-02"), relative times ("2 hours ago",
// "3小时前") and their labels, collapses whitespace within lines, trims
// them and drops empty lines. Lines are joined with "\n". Two texts that
// differ only in such counters and timestamps normalise to the same string.
// It is safe for concurrent use.
func NormalizeText(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		l = collapseLine(l)
		if hasDigitOrAgo(l) {
			l = stripVolatile(l)
		}
		if l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func hasDigitOrAgo(l string) bool {
	return strings.ContainsAny(l, "0123456789") || strings.Contains(l, "刚刚") ||
		strings.Contains(l, "ago")
}

func stripVolatile(l string) string {
	m := "\x00"
	// Each pattern runs only when a cheap substring test says it could
	// match: the regexps are most of this stage's cost otherwise.
	if maybeDate(l) {
		l = rxDate.ReplaceAllString(l, m)
	}
	if nearDigit(l, ":", 1, 1) {
		l = rxTime.ReplaceAllStringFunc(l, func(s string) string {
			core := s
			if i := strings.IndexFunc(s, func(r rune) bool { return r != '.' && r != ':' && (r < '0' || r > '9') }); i >= 0 {
				core = s[:i]
			}
			if rxClock.MatchString(strings.TrimRight(core, ".")) {
				return m
			}
			return s
		})
	}
	if containsAny(l, agoWords) {
		l = rxAgo.ReplaceAllString(l, m)
	}
	if nearDigitAny(l, counterWords) {
		l = rxCounter.ReplaceAllString(l, m)
	}
	if !strings.Contains(l, m) {
		return l
	}
	for {
		k := rxLabel.ReplaceAllString(l, m)
		if k == l {
			break
		}
		l = k
	}
	l = strings.ReplaceAll(l, m, " ")
	l = collapseLine(l)
	// A line that was only timestamps and separators ("| ·") is gone.
	if strings.IndexFunc(l, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
		return ""
	}
	return l
}

// collapseLine trims a line and collapses runs of white space into one
// space, allocating only when something changes.
func collapseLine(l string) string {
	clean := true
	prevSpace := true
	for i := 0; i < len(l); i++ {
		c := l[i]
		sp := c == ' '
		if c == '\t' || c == '\r' || c == '\v' || c == '\f' || c >= 0x80 || sp && prevSpace {
			clean = false
			break
		}
		prevSpace = sp
	}
	if clean && !prevSpace {
		return l
	}
	if clean && l == "" {
		return l
	}
	return strings.Join(strings.FieldsFunc(l, unicode.IsSpace), " ")
}
