package contentseen

import (
	"unicode"
	"unicode/utf8"
)

// Scripts written without spaces between words, other than Chinese.
//
// Japanese kana, Thai, Lao, Khmer and Myanmar put no space between words,
// so the word scanner of tokenizer 1 made a whole run (a Thai phrase, a
// kana stretch between two kanji) one token, and a one-character edit
// changed that whole feature. No maintained Go segmenter covers them, so
// tokenizer 2 gives them character features instead: every run of these
// scripts becomes its overlapping bigrams of characters (a character
// being a base rune with the combining marks that follow it, so a Thai
// vowel or tone mark stays on its consonant), and a run of one character
// is that character. An edit of one character then changes at most two
// features, as an edited word would in a spaced language. Japanese kanji
// stay with the Chinese segmenter (they are Han characters).

// isBigramScript reports whether r belongs to a script that tokenizer 2
// cuts into character bigrams.
func isBigramScript(r rune) bool {
	switch {
	case r >= 0x3041 && r <= 0x30FF && r != 0x30FB: // Hiragana, Katakana (ー included, the middle dot ・ a separator)
		return true
	case r >= 0x31F0 && r <= 0x31FF: // Katakana phonetic extensions
		return true
	case r >= 0x0E01 && r <= 0x0EFF: // Thai, Lao
		return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsNumber(r)
	case r >= 0x1000 && r <= 0x109F: // Myanmar
		return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsNumber(r)
	case r >= 0x1780 && r <= 0x17FF: // Khmer
		return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsNumber(r)
	}
	return false
}

// scanBigrams appends the character bigrams of the run of bigram-script
// characters starting at t[i] and returns the index after the run.
func (s *scratch) scanBigrams(t string, i int, dropStopWords bool) int {
	ts := &s.ts
	// prev and cur are the byte ranges of the last two characters.
	prevStart, prevEnd := -1, -1
	n := 0
	for i < len(t) {
		r, size := utf8.DecodeRuneInString(t[i:])
		if !isBigramScript(r) {
			break
		}
		start := i
		i += size
		for i < len(t) { // the marks that belong to this character
			m, msize := utf8.DecodeRuneInString(t[i:])
			if !unicode.IsMark(m) {
				break
			}
			i += msize
		}
		if n > 0 {
			tok := ts.begin()
			ts.arena = append(ts.arena, t[prevStart:prevEnd]...)
			ts.arena = append(ts.arena, t[start:i]...)
			ts.commit(tok, dropStopWords)
		}
		prevStart, prevEnd = start, i
		n++
	}
	if n == 1 {
		ts.add(t[prevStart:prevEnd], dropStopWords)
	}
	return i
}
