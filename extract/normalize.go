package extract

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
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

// The regexps cost most of this stage when they run on every paragraph
// with a digit in it, so each runs only when a hand scan finds what it
// cannot match without (see maybeDate and maybeCounter). The scans are
// necessary conditions, never sufficient ones: a line they pass still goes
// through the regexp, and a line they reject has no match. (?i) folds "s"
// and "k" into "ſ" and the Kelvin sign too; a line holding either takes the
// regexps unfiltered.
var (
	agoWords = strings.Fields("ago AGO Ago 前 刚刚")
	// hanCounters are the Chinese labels a count follows ("阅读：12") and
	// hanCounted the words that follow a count ("12次阅读"), from rxCounter.
	hanCounters = strings.Fields("阅读 浏览 点击 评论 点赞 分享 收藏 转发 播放 参与 赞 閱讀 瀏覽 點擊 評論 點讚 轉發 參與 讚")
	hanCounted  = strings.Fields("次阅读 次浏览 人阅读 人浏览 次播放 条评论 人参与 人收藏 次点击 次閱讀 次瀏覽 人閱讀 條評論 人參與 次點擊")
)

// foldOdd reports whether l holds a character that (?i) folds onto an ASCII
// letter ("ſ" onto s, the Kelvin sign onto k), which the ASCII scans miss.
func foldOdd(l string) bool { return strings.Contains(l, "ſ") || strings.Contains(l, "\u212a") }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isWord is regexp's \w for one byte: multi-byte characters are not word
// characters to \b.
func isWord(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// isSpace is regexp's \s.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// skipBack returns i moved back over the characters of l[:i] in set.
func skipBack(l string, i int, set string) int {
	for i > 0 {
		r, size := utf8.DecodeLastRuneInString(l[:i])
		if !strings.ContainsRune(set, r) {
			break
		}
		i -= size
	}
	return i
}

// skipFwd returns i moved on over the characters of l[i:] in set.
func skipFwd(l string, i int, set string) int {
	for i < len(l) {
		r, size := utf8.DecodeRuneInString(l[i:])
		if !strings.ContainsRune(set, r) {
			break
		}
		i += size
	}
	return i
}

// digitBefore reports whether l[:i] ends in a digit; digitAt whether l[i]
// is one.
func digitBefore(l string, i int) bool { return i > 0 && isDigit(l[i-1]) }
func digitAt(l string, i int) bool     { return i < len(l) && isDigit(l[i]) }

const spaces = " \t\n\f\r"

// maybeDate reports whether rxDate could match l: a four-digit run followed
// by a separator and a digit (2026-11-02, 2026年11月), a digit-separated
// d/d/d (3/4/2026), a month name next to a day number with a four-digit run
// in the line (March 4, 2026; 4 March 2026), or d月d日.
func maybeDate(l string) bool {
	if foldOdd(l) {
		return true
	}
	month := false
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case isDigit(c):
			if i >= 3 && isDigit(l[i-1]) && isDigit(l[i-2]) && isDigit(l[i-3]) && !digitAt(l, i+1) {
				// The end of a run of four digits or more.
				j := skipFwd(l, i+1, spaces)
				if j < len(l) && (l[j] == '-' || l[j] == '/' || l[j] == '.') {
					j++
				} else if strings.HasPrefix(l[j:], "年") {
					j += len("年")
				} else {
					continue
				}
				if digitAt(l, skipFwd(l, j, spaces)) {
					return true
				}
			}
		case c == '/' || c == '.':
			// d[/.]d{1,2}[/.]d
			if digitBefore(l, i) && digitAt(l, i+1) {
				j := i + 2
				if digitAt(l, j) {
					j++
				}
				if j+1 < len(l) && (l[j] == '/' || l[j] == '.') && isDigit(l[j+1]) {
					return true
				}
			}
		case !month && isLetter(c) && (i == 0 || !isWord(l[i-1])) && i+3 <= len(l) && isMonth(l[i:i+3]):
			// After the month: letters, a dot, a space and a digit
			// ("March 4"); before it: a digit, up to two letters
			// ("4th") and a space ("4 March").
			j := i + 3
			for j < len(l) && isLetter(l[j]) {
				j++
			}
			if j < len(l) && l[j] == '.' {
				j++
			}
			if k := skipFwd(l, j, spaces); k > j && digitAt(l, k) {
				month = true
			}
			if k := skipBack(l, i, spaces); k < i {
				for n := 0; n < 2 && k > 0 && isLetter(l[k-1]); n++ {
					k--
				}
				if digitBefore(l, k) {
					month = true
				}
			}
		}
	}
	if month && hasDigitRun(l, 4) {
		return true
	}
	// d月d日
	for i := 0; ; {
		j := strings.Index(l[i:], "月")
		if j < 0 {
			return false
		}
		at := i + j
		if digitBefore(l, skipBack(l, at, spaces)) && digitAt(l, skipFwd(l, at+len("月"), spaces)) &&
			strings.Contains(l[at:], "日") {
			return true
		}
		i = at + len("月")
	}
}

// maybeLabel reports whether rxLabel could match l: some "\x00" left by a
// removed date or counter follows, after spaces and a colon, a label
// ("updated", "posted on", "发布时间", "更新於"). The English labels end
// in one of labelWords, the Chinese ones in one of hanLabelEnds.
func maybeLabel(l string) bool {
	if foldOdd(l) {
		return strings.IndexByte(l, 0) >= 0
	}
	for i := 0; ; {
		j := strings.IndexByte(l[i:], 0)
		if j < 0 {
			return false
		}
		at := skipBack(l, i+j, spaces+":：")
		w := at
		for w > 0 && isLetter(l[w-1]) {
			w--
		}
		for _, lw := range labelWords {
			if strings.EqualFold(l[w:at], lw) {
				return true
			}
		}
		for _, h := range hanLabelEnds {
			if strings.HasSuffix(l[:at], h) {
				return true
			}
		}
		i += j + 1
	}
}

// labelWords and hanLabelEnds are the last words of rxLabel's labels.
var (
	labelWords   = strings.Fields("updated published posted modified edited created on at")
	hanLabelEnds = strings.Fields("间 于 期 於 間")
)

// replaceDates is rxDate.ReplaceAllString(l, repl), with the regexp run
// only on the stretches of l that can hold a date: the matches are made of
// digits, white space, "-/.,", 年月日, month words and st/nd/rd/th, so
// no match crosses any other character, and a stretch with no digit holds
// none. Each stretch is searched with one character on either side, which
// is what \b looks at; the matches are then those of the whole line.
// A paragraph's text between its numbers is skipped instead of scanned by
// the regexp at every byte (Wikipedia's reference lists were 40 % of this
// stage on their pages).
func replaceDates(l, repl string) string {
	if foldOdd(l) {
		return rxDate.ReplaceAllString(l, repl)
	}
	var b strings.Builder
	done := 0 // l[:done] is in b
	for i := 0; i < len(l); {
		// A stretch of date characters from i.
		j, digit := i, false
		for j < len(l) {
			n := dateChars(l, j)
			if n == 0 {
				break
			}
			digit = digit || isDigit(l[j])
			j += n
		}
		if j == i {
			_, size := utf8.DecodeRuneInString(l[i:])
			i += size
			continue
		}
		if digit {
			lo, hi := i, j
			if lo > 0 {
				_, size := utf8.DecodeLastRuneInString(l[:lo])
				lo -= size
			}
			if hi < len(l) {
				_, size := utf8.DecodeRuneInString(l[hi:])
				hi += size
			}
			for _, mt := range rxDate.FindAllStringIndex(l[lo:hi], -1) {
				b.WriteString(l[done : lo+mt[0]])
				b.WriteString(repl)
				done = lo + mt[1]
			}
		}
		i = j
	}
	if done == 0 {
		return l
	}
	b.WriteString(l[done:])
	return b.String()
}

// dateChars returns how many bytes from l[i] can be part of an rxDate
// match: 1 for a digit, white space or "-/.,"; 3 for 年, 月 or 日; the
// whole word for an ASCII word starting with a month's abbreviation or a
// two-letter st/nd/rd/th; else 0.
func dateChars(l string, i int) int {
	c := l[i]
	switch {
	case isDigit(c) || isSpace(c) || c == '-' || c == '/' || c == '.' || c == ',':
		return 1
	case c >= utf8.RuneSelf:
		for _, h := range []string{"年", "月", "日"} {
			if strings.HasPrefix(l[i:], h) {
				return len(h)
			}
		}
		return 0
	case !isLetter(c) || i > 0 && isLetter(l[i-1]):
		return 0
	}
	j := i
	for j < len(l) && isLetter(l[j]) {
		j++
	}
	if j-i >= 3 && isMonth(l[i:i+3]) {
		return j - i
	}
	if j-i == 2 {
		switch string([]byte{l[i] | 0x20, l[i+1] | 0x20}) {
		case "st", "nd", "rd", "th":
			return 2
		}
	}
	return 0
}

// isMonth reports whether the three bytes s are a month's abbreviation in
// any case.
func isMonth(s string) bool {
	switch string([]byte{s[0] | 0x20, s[1] | 0x20, s[2] | 0x20}) {
	case "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec":
		return true
	}
	return false
}

// maybeCounter reports whether rxCounter could match l: an English counter
// word with a number before it ("1,234 views", "3k+ likes") or after it
// ("Views: 88"), a Chinese label followed by a number ("阅读量：1.2万"), or a
// number followed by a Chinese counted word ("12次阅读").
func maybeCounter(l string) bool {
	if foldOdd(l) {
		return true
	}
	for i := 0; i < len(l); i++ {
		// A word start, or a letter after k or m ("3kviews").
		if !isLetter(l[i]) || i > 0 && isLetter(l[i-1]) && l[i-1]|0x20 != 'k' && l[i-1]|0x20 != 'm' {
			continue
		}
		if n := counterStem(l[i:]); n > 0 {
			if digitBefore(l, skipBack(l, i, spaces+"+kKmM,.")) {
				return true
			}
			j := i + n
			for j < len(l) && isLetter(l[j]) {
				j++
			}
			if digitAt(l, skipFwd(l, j, spaces+":：")) {
				return true
			}
		}
	}
	if !utf8Multi(l) {
		return false
	}
	for _, w := range hanCounters {
		for i := 0; ; {
			j := strings.Index(l[i:], w)
			if j < 0 {
				break
			}
			i += j + len(w)
			if digitAt(l, skipFwd(l, i, spaces+"数量次人:：(（")) {
				return true
			}
		}
	}
	for _, w := range hanCounted {
		for i := 0; ; {
			j := strings.Index(l[i:], w)
			if j < 0 {
				break
			}
			if digitBefore(l, skipBack(l, i+j, spaces+"万千,.")) {
				return true
			}
			i += j + len(w)
		}
	}
	return false
}

// counterStem returns the length of the rxCounter word starting s, in any
// case, or 0.
func counterStem(s string) int {
	for _, w := range counterStems {
		if len(s) >= len(w) && strings.EqualFold(s[:len(w)], w) {
			return len(w)
		}
	}
	return 0
}

// counterStems start the English words of rxCounter (views, reads,
// comments, likes, shares, hits, visits, plays, replies, votes).
var counterStems = strings.Fields("view read comment like share hit visit play repl vote")

// utf8Multi reports whether s has a byte outside ASCII.
func utf8Multi(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true
		}
	}
	return false
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
		l = replaceDates(l, m)
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
	if maybeCounter(l) {
		l = rxCounter.ReplaceAllString(l, m)
	}
	if !strings.Contains(l, m) {
		return l
	}
	for maybeLabel(l) {
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
