package contentseen

import (
	"unicode"
	"unicode/utf8"
)

// Tokenisation, the first half of the pipeline:
//
//  1. NFKC normalisation (full-width Latin letters, digits and punctuation
//     become their ASCII forms, ligatures and compatibility characters are
//     expanded), skipped for pure-ASCII text, which is already NFKC;
//  2. simple case folding, rune by rune: lower(upper(r)), so "ς" and "Σ"
//     both become "σ";
//  3. a hand-written scanner: a token is a run of letters, digits and
//     combining marks, with an apostrophe kept between two letters
//     ("don't") and '.' or ',' kept between two digits ("3.14",
//     "1,000"); everything else separates tokens;
//  4. runs of Han characters go to the Chinese word segmenter
//     (segment.go) instead, which loads its dictionary on first use;
//     with tokenizer 2 they are converted to Simplified first (t2s.go);
//  5. with tokenizer 2, runs of kana, Thai, Lao, Khmer and Myanmar
//     become character bigrams (scripts.go);
//  6. stop words are dropped (stopwords.go).
//
// The kept tokens are appended to one arena, separated by single spaces,
// so that a word shingle is a contiguous slice of it and no token needs an
// allocation of its own.

// tokenStream is the stop-word-free token stream of one text: the tokens
// joined by single spaces in arena, token i at arena[starts[i]:ends[i]]
// with HashFeature hashes[i] (computed once, for the stop-word check and
// word features alike). Not safe for concurrent use; it lives in a pooled
// scratch.
type tokenStream struct {
	arena  []byte
	starts []int32
	ends   []int32
	hashes []uint64
}

func (ts *tokenStream) reset() {
	ts.arena = ts.arena[:0]
	ts.starts = ts.starts[:0]
	ts.ends = ts.ends[:0]
	ts.hashes = ts.hashes[:0]
}

// begin appends the separator if needed and returns where the next token
// starts in the arena. The caller appends the token's bytes, then calls
// commit.
func (ts *tokenStream) begin() int {
	if len(ts.starts) > 0 {
		ts.arena = append(ts.arena, ' ')
	}
	return len(ts.arena)
}

// commit keeps the token appended since begin, unless it is empty or a
// stop word, in which case the arena is cut back to where it was.
func (ts *tokenStream) commit(start int, dropStopWords bool) {
	tok := ts.arena[start:]
	var h uint64
	if len(tok) > 0 {
		h = hashBytes(tok)
	}
	if len(tok) == 0 || (dropStopWords && isStopWord(tok, h)) {
		if len(ts.starts) > 0 {
			start-- // the separator
		}
		ts.arena = ts.arena[:start]
		return
	}
	ts.starts = append(ts.starts, int32(start))
	ts.ends = append(ts.ends, int32(len(ts.arena)))
	ts.hashes = append(ts.hashes, h)
}

// add appends a whole token.
func (ts *tokenStream) add(tok string, dropStopWords bool) {
	start := ts.begin()
	ts.arena = append(ts.arena, tok...)
	ts.commit(start, dropStopWords)
}

func (ts *tokenStream) len() int { return len(ts.starts) }

func (ts *tokenStream) token(i int) []byte { return ts.arena[ts.starts[i]:ts.ends[i]] }

// ASCII byte classes for the scanner's fast path.
const (
	asciiOther = iota
	asciiLower
	asciiUpper
	asciiDigit
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = asciiLower
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = asciiUpper
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = asciiDigit
	}
	return t
}()

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// isHan reports whether r is a Han character; the common CJK Unified
// Ideographs block is checked without the table search.
func isHan(r rune) bool {
	if r >= 0x4E00 && r <= 0x9FFF {
		return true
	}
	return r >= 0x2E80 && unicode.Is(unicode.Han, r)
}

// isWordRune reports whether a non-ASCII, non-Han rune belongs in a word.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r)
}

// foldRune is simple case folding.
func foldRune(r rune) rune {
	return unicode.ToLower(unicode.ToUpper(r))
}

// tokenize appends the tokens of text to s.ts with the given tokenizer
// version (Tokenizer1 or Tokenizer2). Han runs are segmented with the
// Chinese dictionary, loading it on first use; if it cannot be loaded
// they are split into single characters and the error is kept in s.zhErr.
func (s *scratch) tokenize(text string, dropStopWords bool, version int) {
	scripts := version >= Tokenizer2
	var t string
	t, s.norm = normalize(text, s.norm)
	for i := 0; i < len(t); {
		c := t[i]
		if c < utf8.RuneSelf {
			if asciiClass[c] == asciiOther {
				i++
				continue
			}
			i = s.scanWord(t, i, dropStopWords, scripts)
			continue
		}
		r, size := utf8.DecodeRuneInString(t[i:])
		switch {
		case isHan(r):
			j := i + size
			for j < len(t) {
				r2, size2 := utf8.DecodeRuneInString(t[j:])
				if !isHan(r2) {
					break
				}
				j += size2
			}
			if err := s.segmentHan(t[i:j], dropStopWords, scripts); err != nil {
				s.zhErr = err
			}
			i = j
		case scripts && isBigramScript(r):
			i = s.scanBigrams(t, i, dropStopWords)
		case isWordRune(r):
			i = s.scanWord(t, i, dropStopWords, scripts)
		default:
			i += size
		}
	}
}

// scanWord appends the case-folded word starting at t[i] and returns the
// index after it. The caller has checked that t[i] starts a word. With
// scripts (tokenizer 2) a word also ends where a bigram script starts.
func (s *scratch) scanWord(t string, i int, dropStopWords, scripts bool) int {
	ts := &s.ts
	start := ts.begin()
	var prevLetter, prevDigit bool
	for i < len(t) {
		c := t[i]
		if c < utf8.RuneSelf {
			switch asciiClass[c] {
			case asciiLower:
				ts.arena = append(ts.arena, c)
				prevLetter, prevDigit = true, false
				i++
				continue
			case asciiUpper:
				ts.arena = append(ts.arena, c+'a'-'A')
				prevLetter, prevDigit = true, false
				i++
				continue
			case asciiDigit:
				ts.arena = append(ts.arena, c)
				prevLetter, prevDigit = false, true
				i++
				continue
			}
			if c == '\'' && prevLetter && letterAt(t, i+1) {
				ts.arena = append(ts.arena, '\'')
				prevLetter = false
				i++
				continue
			}
			if (c == '.' || c == ',') && prevDigit && i+1 < len(t) && t[i+1] >= '0' && t[i+1] <= '9' {
				ts.arena = append(ts.arena, c)
				prevDigit = false
				i++
				continue
			}
			break
		}
		r, size := utf8.DecodeRuneInString(t[i:])
		if r == '\u2019' && prevLetter && letterAt(t, i+size) { // right single quotation mark used as apostrophe
			ts.arena = append(ts.arena, '\'')
			prevLetter = false
			i += size
			continue
		}
		if isHan(r) || !isWordRune(r) || scripts && isBigramScript(r) {
			break
		}
		ts.arena = utf8.AppendRune(ts.arena, foldRune(r))
		prevLetter, prevDigit = unicode.IsLetter(r), unicode.IsNumber(r)
		i += size
	}
	ts.commit(start, dropStopWords)
	return i
}

// letterAt reports whether a non-Han letter starts at t[i].
func letterAt(t string, i int) bool {
	if i >= len(t) {
		return false
	}
	if c := t[i]; c < utf8.RuneSelf {
		return asciiClass[c] == asciiLower || asciiClass[c] == asciiUpper
	}
	r, _ := utf8.DecodeRuneInString(t[i:])
	return !isHan(r) && unicode.IsLetter(r)
}
