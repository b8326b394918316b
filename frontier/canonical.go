package frontier

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nlnwa/whatwg-url/canonicalizer"
)

// MaxURLLength is the longest canonical URL Canonical accepts and Add
// stores. URLs are bbolt keys (limit 32 KiB); longer URLs are almost always
// session or tracking garbage, and sitemaps cap URLs at 2,048 bytes.
const MaxURLLength = 4096

// maxInput bounds the raw input of Canonical; see there.
const maxInput = 2 * MaxURLLength

// ErrBadURL is wrapped by every error of Canonical and by Add for an item
// whose URL is not canonical-looking.
var ErrBadURL = errors.New("frontier: bad url")

// parser is the WHATWG URL parser (what browsers do) plus two canonicaliser
// options. We deliberately avoid the library's "Semantic" and
// "GoogleSafeBrowsing" profiles: they decode percent-escapes repeatedly
// (turning %2F into a path separator and %252F into /) and the Semantic one
// decodes with ISO-8859-1, which mangles UTF-8 paths such as /新闻/页.
// Query sorting is done by hand below, because the library's SearchParams
// re-serialises the query as form data ("%2B" becomes "+", which servers
// read as a space).
//
// The parser is stateless after construction and safe for concurrent use.
var parser = canonicalizer.New(
	canonicalizer.WithRemoveFragment(),
	canonicalizer.WithRemoveUserInfo(),
)

// Canonical returns the canonical form of an absolute http or https URL, the
// key of the URL-seen set. Two URLs with the same canonical form are fetched
// once. The form is:
//
//   - WHATWG parsing (as a browser would): scheme and host lower-case, the
//     default port (80, 443) dropped, dot segments ("/a/./b/../c", also
//     "%2e%2e") resolved, an empty path becomes "/", backslashes become
//     slashes, IPv4 numbers normalised ("http://0x7f.1/" is 127.0.0.1);
//   - the host as ASCII: internationalised names in punycode
//     ("例子.测试" becomes "xn--fsqu00a.xn--0zwm56d");
//   - user name, password and fragment dropped;
//   - non-ASCII characters in path and query as percent-encoded UTF-8 with
//     upper-case hex digits: "/新闻/页" and "/%e6%96%b0%e9%97%bb/%E9%A1%B5"
//     both become "/%E6%96%B0%E9%97%BB/%E9%A1%B5". Escapes of unreserved
//     ASCII characters (letters, digits, "-._~") are decoded ("%7Euser"
//     becomes "~user"); every other escape is kept, so "%2F" and "%2B"
//     keep their meaning;
//   - query parameters sorted by name with a stable sort (the order of
//     repeated names is kept), empty parameters ("a=1&&b=2") and an empty
//     query ("?") dropped; "+" is not rewritten;
//   - nothing else: a trailing dot in the host ("example.com.") and
//     repeated slashes in the path are kept, because servers may treat
//     them differently, and no parameters (utm_*, session ids) are removed.
//
// Canonical is idempotent: Canonical(Canonical(x)) == Canonical(x). It
// returns an error wrapping ErrBadURL for relative URLs, schemes other than
// http and https, an empty or invalid host, and results longer than
// MaxURLLength or inputs longer than twice that (a guard against hostile
// hrefs: the parser's cost grows with the square of the path segments). It
// is safe for concurrent use.
func Canonical(raw string) (string, error) {
	if len(raw) > maxInput {
		// The WHATWG parser is quadratic in the number of path segments
		// (5 s for a 100 KB href of "a/a/..."): refuse before parsing.
		return "", fmt.Errorf("%w %q: %d bytes, longer than %d", ErrBadURL, clip(raw), len(raw), maxInput)
	}
	u, err := parser.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%w %q: %w", ErrBadURL, clip(raw), err)
	}
	if s := u.Scheme(); s != "http" && s != "https" {
		return "", fmt.Errorf("%w %q: scheme %q is not http or https", ErrBadURL, clip(raw), s)
	}
	if u.Hostname() == "" {
		return "", fmt.Errorf("%w %q: empty host", ErrBadURL, clip(raw))
	}
	var b strings.Builder
	b.Grow(len(raw) + 16)
	b.WriteString(u.Scheme())
	b.WriteString("://")
	b.WriteString(u.Host()) // host[:port], default port already dropped
	normEscapes(&b, u.Pathname())
	writeQuery(&b, strings.TrimPrefix(u.Search(), "?"))
	out := b.String()
	if len(out) > MaxURLLength {
		return "", fmt.Errorf("%w %q: %d bytes, longer than %d", ErrBadURL, clip(raw), len(out), MaxURLLength)
	}
	return out, nil
}

// writeQuery writes "?" and the query with empty parameters dropped, escapes
// normalised and parameters stably sorted by (normalised) name.
func writeQuery(b *strings.Builder, q string) {
	if q == "" {
		return
	}
	var params []string
	for p := range strings.SplitSeq(q, "&") {
		if p == "" {
			continue
		}
		var pb strings.Builder
		normEscapes(&pb, p)
		params = append(params, pb.String())
	}
	if len(params) == 0 {
		return
	}
	slices.SortStableFunc(params, func(a, b string) int {
		return strings.Compare(paramName(a), paramName(b))
	})
	b.WriteByte('?')
	for i, p := range params {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p)
	}
}

func paramName(p string) string {
	name, _, _ := strings.Cut(p, "=")
	return name
}

// normEscapes copies s to b, upper-casing the hex digits of every valid
// %XX escape and decoding escapes of unreserved ASCII characters (RFC 3986
// section 6.2.2). A "%" not followed by two hex digits is kept as is: the
// WHATWG parser keeps it too, so the result stays a fixed point.
func normEscapes(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' || i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			b.WriteByte(c)
			continue
		}
		v := unhex(s[i+1])<<4 | unhex(s[i+2])
		if isUnreserved(v) && !(isHex(v) && afterStrayPercent(b.String())) {
			b.WriteByte(v)
		} else {
			const hex = "0123456789ABCDEF"
			b.WriteByte('%')
			b.WriteByte(hex[v>>4])
			b.WriteByte(hex[v&15])
		}
		i += 2
	}
}

// afterStrayPercent reports whether out ends in a "%" or a "%" and one hex
// digit that is not an escape: decoding a hex digit after it would make a
// new escape ("/a%7%41" would become "/a%7A", then "/az" on the next call),
// so such an escape is kept as it is.
func afterStrayPercent(out string) bool {
	n := len(out)
	return n >= 1 && out[n-1] == '%' || n >= 2 && out[n-2] == '%' && isHex(out[n-1])
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	default:
		return c - 'a' + 10
	}
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// HostKey returns the host of a canonical URL with its port if it has a
// non-default one ("example.com", "example.com:8080", "[::1]:8080"): the unit
// of politeness. Because Canonical drops default ports, http://example.com/
// and https://example.com/ share one key, which is what politeness wants
// (one server). It returns "" for a string that is not an absolute http(s)
// URL. It does no parsing beyond slicing and is safe for concurrent use.
func HostKey(canonicalURL string) string {
	rest, ok := strings.CutPrefix(canonicalURL, "http://")
	if !ok {
		if rest, ok = strings.CutPrefix(canonicalURL, "https://"); !ok {
			return ""
		}
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// clip shortens s for error messages.
func clip(s string) string {
	const n = 200
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
