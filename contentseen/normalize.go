package contentseen

import (
	"unicode/utf8"
	"unsafe"

	"golang.org/x/text/unicode/norm"
)

// normalize returns text in NFKC, using buf (returned for reuse) when the
// text changes. ASCII text is already NFKC. Text made only of ASCII, the
// common CJK ideographs, full-width ASCII forms, the ideographic space and
// a few CJK and typographic punctuation marks (the bulk of Chinese pages)
// is normalised by a table-free loop; anything else goes through
// golang.org/x/text/unicode/norm, which costs about as much again as the
// rest of the pipeline on Chinese text. TestFastNFKC and FuzzNormalize
// check the loop against norm.
func normalize(text string, buf []byte) (string, []byte) {
	if isASCII(text) {
		return text, buf
	}
	if out, ok := fastNFKC(text, buf[:0]); ok {
		return bytesView(out), out
	}
	buf = norm.NFKC.AppendString(buf[:0], text)
	return bytesView(buf), buf
}

// bytesView returns b as a string without copying. The caller must not
// modify b while the string is in use: here the string lives only during
// one tokenize call, and b is the scratch's norm buffer, which nothing
// else writes until the next call.
func bytesView(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// fastNFKC appends the NFKC form of text to dst if every rune of text is
// one that fastRune handles, and reports whether it did. Such runes are
// NFKC starters that combine with nothing before them, so a text made of
// them alone is normalised rune by rune.
func fastNFKC(text string, dst []byte) ([]byte, bool) {
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		m, ok := fastRune(r)
		if !ok {
			return dst, false
		}
		dst = utf8.AppendRune(dst, m)
		i += size
	}
	return dst, true
}

// fastRune maps a non-ASCII rune to its NFKC form for the runes the fast
// path knows; ok is false for all others (including invalid UTF-8).
func fastRune(r rune) (m rune, ok bool) {
	switch {
	case r >= 0x4E00 && r <= 0x9FFF: // CJK Unified Ideographs
		return r, true
	case r >= 0xFF01 && r <= 0xFF5E: // full-width ASCII forms
		return r - 0xFF01 + '!', true
	case r == 0x3000: // ideographic space
		return ' ', true
	case r == 0x3001 || r == 0x3002 || (r >= 0x3008 && r <= 0x3011): // 、。〈〉《》「」『』【】
		return r, true
	case r == 0x00B7 || r == 0x2014 || r == 0x2018 || r == 0x2019 || r == 0x201C || r == 0x201D: // ·—‘’“”
		return r, true
	}
	return 0, false
}
