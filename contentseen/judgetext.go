package contentseen

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/zeebo/xxh3"
)

// maxHeadlineRunes bounds the lines StripTitle may take for a headline.
const maxHeadlineRunes = 300

// headlineLines is how many leading lines StripTitle looks at: a headline
// may follow a kicker or a breadcrumb line.
const headlineLines = 3

// StripTitle returns text without the page's own headline: among its first
// three lines, a line of at most 300 characters whose letters and digits
// (case-folded) are those of title, or a run of them (a <title> of
// "Headline - Site" and an <h1> "Headline"), is removed. The title must not
// decide whether two pages are copies: the same article under a new
// headline is a copy, and two short articles under one headline are not;
// each page's headline is recognised by its own title, so the rest of the
// text is compared. With an empty title, or no such line, text is returned
// as it is.
func StripTitle(text, title string) string {
	t := letterKey(title)
	if t == "" {
		return text
	}
	for n, start := 0, 0; n < headlineLines && start < len(text); n++ {
		lineEnd, next := len(text), len(text)
		if i := strings.IndexByte(text[start:], '\n'); i >= 0 {
			lineEnd, next = start+i, start+i+1
		}
		line := text[start:lineEnd]
		if utf8.RuneCountInString(line) <= maxHeadlineRunes {
			if l := letterKey(line); l != "" && strings.Contains(t, l) && isHeadlineOf(l, t) {
				if next == len(text) { // the last line: drop the newline before it
					return strings.TrimSuffix(text[:start], "\n")
				}
				return text[:start] + text[next:]
			}
		}
		start = next
	}
	return text
}

// isHeadlineOf reports whether line (a letter key contained in title's
// key) is the title's headline rather than a word of it: it covers at
// least half of the title's letters, or the title is that line plus a
// site name.
func isHeadlineOf(line, title string) bool {
	return 2*len(line) >= len(title) || strings.HasPrefix(title, line) || strings.HasSuffix(title, line)
}

// letterKey returns the letters and digits of s, case-folded, NFKC width
// folded for full-width ASCII: what "the same text" means for titles and
// for TextDigest.
func letterKey(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r, ok := keyRune(r); ok {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// keyRune maps r to its case-folded, width-folded form, ok false for a
// rune that is neither a letter nor a digit (punctuation, spaces, marks).
func keyRune(r rune) (rune, bool) {
	if r >= 0xFF01 && r <= 0xFF5E {
		r = r - 0xFF01 + '!'
	}
	if r < utf8.RuneSelf {
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
			return r, true
		case 'A' <= r && r <= 'Z':
			return r + 'a' - 'A', true
		}
		return 0, false
	}
	if unicode.IsLetter(r) || unicode.IsDigit(r) {
		return unicode.ToLower(r), true
	}
	return 0, false
}

// TextDigest is the exact-duplicate key of a text: XXH3-128 (seed 0) of
// its letters and digits, case-folded and width-folded as UTF-8, in order.
// Two texts with the same digest differ at most in punctuation, spacing,
// case and line breaks: a stray "." or "|" left where extraction removed a
// timestamp or a share bar does not make a copy "near". The caller strips
// the title first (StripTitle). Frozen like HashFeature (golden vectors in
// the tests): digests are persisted as the store's exact-match index.
func TextDigest(text string) [16]byte {
	h := xxh3.New()
	var buf [512]byte
	n := 0
	for i := 0; i < len(text); {
		if n+utf8.UTFMax > len(buf) {
			writeAll(h, buf[:n])
			n = 0
		}
		if c := text[i]; c < utf8.RuneSelf {
			if k := asciiKey[c]; k != 0 {
				buf[n] = k
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if r, ok := keyRune(r); ok {
			n += utf8.EncodeRune(buf[n:], r)
		}
	}
	writeAll(h, buf[:n])
	return h.Sum128().Bytes()
}

// asciiKey maps an ASCII byte to its key form (keyRune), 0 for a byte
// that is not a letter or digit.
var asciiKey = func() (t [utf8.RuneSelf]byte) {
	for c := range t {
		if r, ok := keyRune(rune(c)); ok {
			t[c] = byte(r)
		}
	}
	return t
}()

func writeAll(h *xxh3.Hasher, b []byte) {
	if _, err := h.Write(b); err != nil {
		panic(err) // xxh3.Hasher.Write never fails
	}
}
