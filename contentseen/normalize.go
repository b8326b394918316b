package contentseen

import (
	"unicode/utf8"
	"unsafe"

	"golang.org/x/text/unicode/norm"
)

// normalize returns text in NFKC, using buf (returned for reuse) when the
// text changes. ASCII text is already NFKC. ASCII, the common CJK
// ideographs, full-width ASCII forms, the ideographic space and a few CJK
// and typographic punctuation marks (the bulk of Chinese pages) are
// normalised by a table-free loop (fastRune); only the spans of other
// runes go through golang.org/x/text/unicode/norm, which costs about as
// much again as the rest of the pipeline on Chinese text. A slow span
// starts at the rune before the first unknown rune (a mark may combine
// with it) and ends before the next rune the loop knows: those are NFKC
// starters that combine with nothing before them, so the text may be cut
// there and normalised piece by piece. TestFastNFKC and FuzzNormalize
// check the result against norm on whole texts.
func normalize(text string, buf []byte) (string, []byte) {
	if isASCII(text) {
		return text, buf
	}
	out := buf[:0]
	prev, prevOut := -1, 0 // where the rune before i starts in text and in out, if the loop wrote it
	spans := 0
	for i := 0; i < len(text); {
		if c := text[i]; c < utf8.RuneSelf {
			prev, prevOut = i, len(out)
			out = append(out, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if m, ok := fastRune(r); ok {
			prev, prevOut = i, len(out)
			out = utf8.AppendRune(out, m)
			i += size
			continue
		}
		if r == utf8.RuneError && size == 1 {
			// norm's handling of invalid UTF-8 depends on what follows
			// it: pieces would differ from the whole text.
			out = norm.NFKC.AppendString(buf[:0], text)
			return bytesView(out), out
		}
		if spans++; spans > 8 && spans*128 > i {
			// Many short spans so far (accented Latin, Cyrillic: more
			// than one per 128 bytes; Chinese pages have at most one per
			// 150): one call for the whole text is cheaper than one per
			// span.
			out = norm.NFKC.AppendString(buf[:0], text)
			return bytesView(out), out
		}
		start := i
		if prev >= 0 {
			start, out = prev, out[:prevOut]
		}
		j := i + size
		for j < len(text) {
			if text[j] < utf8.RuneSelf {
				break
			}
			r, size := utf8.DecodeRuneInString(text[j:])
			if _, ok := fastRune(r); ok {
				break
			}
			if r == utf8.RuneError && size == 1 {
				out = norm.NFKC.AppendString(buf[:0], text)
				return bytesView(out), out
			}
			j += size
		}
		out = norm.NFKC.AppendString(out, text[start:j])
		prev, i = -1, j
	}
	return bytesView(out), out
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
