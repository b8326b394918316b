package extract

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// DefaultMaxBodySize is the number of body bytes read when
// Options.MaxBodySize is zero.
const DefaultMaxBodySize = 10 << 20

// ErrNotHTML is returned, wrapped with the reason, when the input is not an
// HTML page: a non-HTML content type or binary bytes.
var ErrNotHTML = errors.New("extract: not html")

// ErrInternal is returned, wrapped with the panic value, if extraction
// panics; Extract recovers so that one hostile page cannot stop a crawler.
var ErrInternal = errors.New("extract: internal error")

// Options tune one extraction. The zero value is ready to use; an Options
// value is plain data and may be shared by concurrent calls.
type Options struct {
	// MaxBodySize is the number of bytes read at most; 0 means
	// DefaultMaxBodySize. A longer body is cut and Document.Truncated set.
	MaxBodySize int64
	// XRobotsTag is the response's X-Robots-Tag header value(s), if any,
	// joined with ", " when there were several. Directives scoped to a
	// named user agent ("otherbot: noindex") are ignored.
	XRobotsTag string
}

// Link is one <a href> (or <area href>) of a page; plain data.
type Link struct {
	// URL is absolute, resolved against <base href>, without fragment;
	// only http and https links are kept.
	URL string
	// Text is the anchor text, whitespace normalised (the image alt text
	// when the anchor has no text).
	Text string
	// NoFollow is true when every anchor to URL on the page had
	// rel="nofollow" (or ugc/sponsored). The page-wide nofollow is
	// Document.NoFollow; the caller combines them.
	NoFollow bool
}

// Document is what extraction makes of one page. A Document is plain data:
// safe to read from several goroutines, not to modify concurrently.
type Document struct {
	URL          string // the page URL given (final URL after redirects)
	CanonicalURL string // <link rel=canonical>, absolute, or ""
	Title        string
	// Text is the article text: one paragraph or block per line, whitespace
	// normalised, counters and timestamps removed (see NormalizeText).
	Text string
	// Lang is a lower-case primary language subtag ("en", "zh") from
	// <html lang> or a meta tag, else a guess from the text's script, ""
	// when unknown.
	Lang     string
	Charset  string // the charset the body was decoded with ("utf-8", "gbk", ...)
	NoIndex  bool   // meta robots or X-Robots-Tag say noindex (or none)
	NoFollow bool   // meta robots or X-Robots-Tag say nofollow (or none)
	Links    []Link // in document order, one per URL
	// Fallback is true when readability did not find an article and the
	// visible text minus boilerplate was used instead.
	Fallback  bool
	Truncated bool // the body was longer than MaxBodySize and was cut
}

// Extract reads at most o.MaxBodySize bytes of r and extracts the page.
// contentType is the response's Content-Type header ("" to sniff);
// pageURL is the page's final URL and must not be nil. Extract is safe for
// concurrent use.
func Extract(r io.Reader, contentType string, pageURL *url.URL, o Options) (*Document, error) {
	limit := o.MaxBodySize
	if limit <= 0 {
		limit = DefaultMaxBodySize
	}
	body, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("extract: read body: %w", err)
	}
	return ExtractBytes(body, contentType, pageURL, o)
}

// ExtractBytes is Extract for a body already in memory. A body longer than
// o.MaxBodySize is cut. body is not modified or retained.
func ExtractBytes(body []byte, contentType string, pageURL *url.URL, o Options) (doc *Document, err error) {
	defer func() {
		if p := recover(); p != nil {
			doc, err = nil, fmt.Errorf("%w: %s: %v", ErrInternal, pageURL, p)
		}
	}()
	if pageURL == nil {
		return nil, errors.New("extract: nil page url")
	}
	limit := o.MaxBodySize
	if limit <= 0 {
		limit = DefaultMaxBodySize
	}
	truncated := false
	if int64(len(body)) > limit {
		body, truncated = body[:limit], true
	}
	if err := checkHTML(body, contentType); err != nil {
		return nil, err
	}
	text, cs, err := decode(body, contentType)
	if err != nil {
		return nil, fmt.Errorf("extract: %s: %w", pageURL, err)
	}
	d := &Document{URL: pageURL.String(), Charset: cs, Truncated: truncated}
	d.NoIndex, d.NoFollow = robots(o.XRobotsTag)
	root, err := html.ParseWithOptions(bytes.NewReader(text), html.ParseOptionEnableScripting(false))
	if err != nil {
		// x/net/html refuses trees nested deeper than 512 elements;
		// such pages still get their visible text from the tokenizer.
		tokenizerExtract(d, text, pageURL)
	} else {
		extractTree(d, root, pageURL)
	}
	d.Text = NormalizeText(d.Text)
	// A declared language loses to the text's script only when the text
	// is plainly Chinese, Japanese or Korean and the page said otherwise
	// (templates copied from English sites keep lang="en").
	if g := guessLang(d.Text); d.Lang == "" || cjk(g) && !cjk(d.Lang) {
		d.Lang = g
	}
	return d, nil
}

// binaryMagic are file signatures that make a body binary whatever its
// Content-Type says: images, archives and compressed streams that servers
// send as text/html.
var binaryMagic = []struct{ prefix, name string }{
	{"\x89PNG\r\n\x1a\n", "PNG"}, {"GIF87a", "GIF"}, {"GIF89a", "GIF"}, {"\xff\xd8\xff", "JPEG"},
	{"\x1f\x8b\x08", "gzip"}, {"PK\x03\x04", "zip"}, {"Rar!\x1a\x07", "RAR"}, {"7z\xbc\xaf\x27\x1c", "7z"},
	{"\x28\xb5\x2f\xfd", "zstd"}, {"\x7fELF", "ELF"}, {"\x00asm", "wasm"}, {"wOFF", "WOFF"}, {"wOF2", "WOFF2"},
}

// checkHTML rejects declared non-HTML types and binary bodies.
func checkHTML(body []byte, contentType string) error {
	if contentType != "" {
		mt, _, err := mime.ParseMediaType(contentType)
		if err != nil {
			mt = strings.ToLower(strings.TrimSpace(strings.Split(contentType, ";")[0]))
		}
		switch mt {
		// text/plain is let through: misconfigured servers label HTML
		// so, and a plain text page still has text. XML (feeds,
		// sitemaps) is not a page.
		case "text/html", "application/xhtml+xml", "text/plain", "":
		default:
			return fmt.Errorf("%w: content type %q", ErrNotHTML, mt)
		}
	}
	if _, _, ok := bomEncoding(body); ok {
		return nil // UTF-16 text has NUL bytes; it is not binary.
	}
	head := body
	if len(head) > 1024 {
		head = head[:1024]
	}
	// A file format's magic number under any label: only signatures no
	// text starts with (text may well start "BM", "ID3" or "%PDF-").
	for _, m := range binaryMagic {
		if bytes.HasPrefix(head, []byte(m.prefix)) {
			return fmt.Errorf("%w: binary bytes (%s)", ErrNotHTML, m.name)
		}
	}
	// A PDF's first KiB may be all text (a linearized file's dictionary),
	// but text about PDF has no objects in it.
	if bytes.HasPrefix(head, []byte("%PDF-")) && bytes.Contains(head, []byte(" obj")) {
		return fmt.Errorf("%w: binary bytes (PDF)", ErrNotHTML)
	}
	// Otherwise bytes no text has many of.
	nul, ctl := 0, 0
	for _, c := range head {
		switch {
		case c == 0:
			nul++
		case c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != 0x1b:
			ctl++
		}
	}
	if nul+ctl > len(head)/10 {
		return fmt.Errorf("%w: binary bytes (%d control bytes in the first KiB)", ErrNotHTML, nul+ctl)
	}
	// A few NULs in what is text otherwise are a damaged page (the
	// tokenizer drops them); in anything else (random or compressed
	// bytes have about four per KiB, and other control bytes) binary.
	if nul > 0 && !strings.HasPrefix(http.DetectContentType(bytes.ReplaceAll(head, []byte{0}, nil)), "text/") {
		return fmt.Errorf("%w: binary bytes (%d NULs in the first KiB)", ErrNotHTML, nul)
	}
	if contentType == "" {
		switch mt := http.DetectContentType(body); {
		case strings.HasPrefix(mt, "text/html"), strings.HasPrefix(mt, "text/plain"):
		default:
			return fmt.Errorf("%w: sniffed content type %q", ErrNotHTML, mt)
		}
	}
	return nil
}
