package extract

import (
	"strings"
	"unicode"
)

// guessLang names the dominant script of the first few thousand letters of
// text: Han -> "zh" (unless kana show it is Japanese), Hangul -> "ko",
// Cyrillic -> "ru", Arabic -> "ar", Latin with English function words ->
// "en". Anything else is "" rather than a wrong answer.
func guessLang(text string) string {
	var han, kana, hangul, cyr, arabic, latin, n int
	for _, r := range text {
		if n >= 4000 {
			break
		}
		switch {
		case r < 0x80:
			if unicode.IsLetter(r) {
				latin++
				n++
			}
			continue
		case unicode.Is(unicode.Han, r):
			han++
		case unicode.Is(unicode.Hiragana, r), unicode.Is(unicode.Katakana, r):
			kana++
		case unicode.Is(unicode.Hangul, r):
			hangul++
		case unicode.Is(unicode.Cyrillic, r):
			cyr++
		case unicode.Is(unicode.Arabic, r):
			arabic++
		case unicode.IsLetter(r):
			latin++
		default:
			continue
		}
		n++
	}
	if n == 0 {
		return ""
	}
	// CJK characters carry a word each; Latin letters a fifth of one.
	words := float64(latin) / 5
	switch {
	case kana > 0 && float64(han+kana) > words && kana*10 > han:
		return "ja"
	case float64(han) > words && han > hangul:
		return "zh"
	case float64(hangul) > words:
		return "ko"
	case cyr > latin:
		return "ru"
	case arabic > latin:
		return "ar"
	case englishy(text):
		return "en"
	}
	return ""
}

// englishy reports whether common English function words make up a good
// share of the first 300 words.
func englishy(text string) bool {
	if len(text) > 4096 {
		text = text[:4096]
	}
	words, hits := 0, 0
	for _, w := range strings.Fields(text) {
		if words >= 300 {
			break
		}
		words++
		switch strings.ToLower(strings.Trim(w, `.,;:!?"'()`)) {
		case "the", "and", "of", "to", "a", "in", "is", "that", "for", "it", "with", "was", "on", "as", "are", "this", "be", "by":
			hits++
		}
	}
	return words > 0 && hits*8 >= words
}

func cjk(lang string) bool { return lang == "zh" || lang == "ja" || lang == "ko" }
