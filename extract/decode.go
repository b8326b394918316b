package extract

import (
	"bytes"
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/unicode"
)

// metaScanLimit is how far the <meta charset> prescan looks. The HTML
// standard says 1024 bytes, but real pages put long <script> blocks in front
// of the declaration, so we look further; the scan is a tokenizer pass over
// the head only, which is cheap.
const metaScanLimit = 8 << 10

// decode converts body to valid UTF-8 and reports the charset it used.
//
// Order of evidence:
//  1. a byte-order mark;
//  2. the bytes themselves when they are valid UTF-8 and contain non-ASCII:
//     UTF-8 wins over any declared legacy charset, in the HTTP header or in a
//     <meta> tag, because multi-byte UTF-8 sequences practically never occur
//     by chance in GBK, Big5 or Latin-1 text, while stale declarations
//     (a template saying GB2312 on a page stored as UTF-8, a server default
//     "charset=ISO-8859-1") are common;
//  3. the Content-Type charset parameter;
//  4. <meta charset> or <meta http-equiv=Content-Type> in the first 8 KiB;
//  5. sniffing: pure ASCII is UTF-8; otherwise a GB18030 trial decode that
//     yields mostly Han characters picks GB18030, else windows-1252 (the
//     WHATWG default).
//
// Invalid UTF-8 in a page decoded as UTF-8 is replaced by U+FFFD, except
// that a page declared UTF-8 whose bytes are largely invalid UTF-8 and read
// as GB18030 text (a GBK page under a template's "utf-8") is GB18030.
func decode(body []byte, contentType string) ([]byte, string, error) {
	if e, name, ok := bomEncoding(body); ok {
		out, err := e.NewDecoder().Bytes(body)
		if err != nil {
			return nil, name, fmt.Errorf("decode %s: %w", name, err)
		}
		return bytes.ToValidUTF8(out, []byte("\uFFFD")), name, nil
	}
	valid := utf8.Valid(body)
	if valid && hasHighBit(body) {
		return body, "utf-8", nil
	}
	e, name := headerEncoding(contentType)
	if e == nil {
		e, name = metaEncoding(body)
	}
	if e == nil {
		switch {
		case valid:
			return body, "utf-8", nil
		case looksGB18030(body):
			e, name = simplifiedchinese.GB18030, "gb18030"
		default:
			e, name = charset.Lookup("windows-1252")
		}
	}
	if name == "utf-8" {
		if mostlyInvalidUTF8(body) && looksGB18030(body) {
			// GBK pages under a template's or server's "utf-8": their
			// bytes almost never form UTF-8, and decoding them as it
			// would leave little but U+FFFD. Latin-1, Shift_JIS or EUC-KR
			// under "utf-8" decode as GB18030 too, into rare characters:
			// Chinese text is mostly its commonest ones.
			out, err := simplifiedchinese.GB18030.NewDecoder().Bytes(body)
			if err == nil && commonHanShare(out) >= minCommonHanShare {
				return bytes.ToValidUTF8(out, []byte("\uFFFD")), "gb18030", nil
			}
		}
		return bytes.ToValidUTF8(body, []byte("\uFFFD")), name, nil
	}
	out, err := e.NewDecoder().Bytes(body)
	if err != nil {
		return nil, name, fmt.Errorf("decode %s: %w", name, err)
	}
	return bytes.ToValidUTF8(out, []byte("\uFFFD")), name, nil
}

func bomEncoding(b []byte) (encoding.Encoding, string, bool) {
	switch {
	case bytes.HasPrefix(b, []byte{0xEF, 0xBB, 0xBF}):
		return unicode.UTF8BOM, "utf-8", true
	case bytes.HasPrefix(b, []byte{0xFE, 0xFF}):
		return unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM), "utf-16be", true
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE}):
		return unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM), "utf-16le", true
	}
	return nil, "", false
}

func hasHighBit(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return true
		}
	}
	return false
}

// headerEncoding returns the encoding named by the Content-Type charset
// parameter, or nil. UTF-16 labels are ignored without a BOM, as browsers do.
func headerEncoding(contentType string) (encoding.Encoding, string) {
	if contentType == "" {
		return nil, ""
	}
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil, ""
	}
	return lookup(params["charset"])
}

func lookup(label string) (encoding.Encoding, string) {
	if label == "" {
		return nil, ""
	}
	e, name := charset.Lookup(label)
	if e == nil || strings.HasPrefix(name, "utf-16") {
		return nil, ""
	}
	return e, name
}

// metaEncoding scans the start of the document for a charset declaration.
func metaEncoding(body []byte) (encoding.Encoding, string) {
	if len(body) > metaScanLimit {
		body = body[:metaScanLimit]
	}
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return nil, ""
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if string(name) == "body" {
				return nil, ""
			}
			if string(name) != "meta" || !hasAttr {
				continue
			}
			var cs, content string
			var httpEquiv bool
			for {
				k, v, more := z.TagAttr()
				switch strings.ToLower(string(k)) {
				case "charset":
					cs = string(v)
				case "content":
					content = string(v)
				case "http-equiv":
					httpEquiv = strings.EqualFold(string(v), "content-type")
				}
				if !more {
					break
				}
			}
			if cs == "" && httpEquiv && content != "" {
				if _, params, err := mime.ParseMediaType(content); err == nil {
					cs = params["charset"]
				}
			}
			if e, n := lookup(strings.TrimSpace(cs)); e != nil {
				return e, n
			}
		}
	}
}

// looksGB18030 reports whether a trial GB18030 decode of the first 16 KiB
// gives mostly CJK characters among the non-ASCII ones. It runs only for
// undeclared pages that are not UTF-8, and for pages declared UTF-8 that
// mostly are not, so its cost rarely matters.
func looksGB18030(b []byte) bool {
	if len(b) > 16<<10 {
		b = b[:16<<10]
	}
	out, err := simplifiedchinese.GB18030.NewDecoder().Bytes(b)
	if err != nil {
		return false
	}
	var han, other int
	for _, r := range string(out) {
		switch {
		case r < 0x80:
		case r >= 0x4E00 && r <= 0x9FFF, r >= 0x3000 && r <= 0x303F, r >= 0xFF00 && r <= 0xFFEF:
			han++
		default:
			other++
		}
	}
	return han >= 8 && han > 9*other
}

// mostlyInvalidUTF8 reports whether many of b's non-ASCII bytes are not
// part of valid UTF-8: a page in another charset, not a UTF-8 page with a
// stray bad byte (in the first 16 KiB, as looksGB18030 reads). GBK text
// has about half its bytes invalid: its byte pairs often run together
// into valid two-byte UTF-8 by chance; a quarter is the bar.
func mostlyInvalidUTF8(b []byte) bool {
	if len(b) > 16<<10 {
		b = b[:16<<10]
	}
	var high, bad int
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if b[0] >= 0x80 {
			high += n
			if r == utf8.RuneError && n == 1 {
				bad++
			}
		}
		b = b[n:]
	}
	return bad >= 8 && 4*bad >= high
}

// commonHan are the hundred commonest characters of modern Chinese text
// (simplified), which make up about a third of it; text decoded from
// another charset as GB18030 hits them about one time in forty.
var commonHan = func() map[rune]bool {
	m := map[rune]bool{}
	for _, r := range "的一是不了在人有我他这个们中来上大为和国地到以说时要就出会可也你对生能而子那得于着下自之年过发后作里用道行所然家种事成方多经么去法学如都同现当没动面起看定天分还进好小部其些主样理心她本前开但因只从想实" {
		m[r] = true
	}
	return m
}()

// minCommonHanShare is the share of commonHan among the Han characters of
// a text below which it is not taken for Chinese.
const minCommonHanShare = 0.1

// commonHanShare returns the share of commonHan among text's Han
// characters (0 without any).
func commonHanShare(text []byte) float64 {
	han, common := 0, 0
	for _, r := range string(text) {
		if r >= 0x4E00 && r <= 0x9FFF {
			han++
			if commonHan[r] {
				common++
			}
		}
	}
	if han == 0 {
		return 0
	}
	return float64(common) / float64(han)
}
