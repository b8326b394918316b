package crawler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// fetchState is the per-call record of one Fetcher.do. It travels in two
// places: as a value of the stdlib context (so our RoundTripper and redirect
// check, which only see *http.Request, can find it) and in the fresh
// colly.Context of the call (so colly callbacks find it). It is touched only
// by the goroutine running do: colly in synchronous mode and http.Client run
// RoundTrip, CheckRedirect and the callbacks on the caller's goroutine.
type fetchState struct {
	limit        int64 // body bytes kept; one more is read to detect truncation
	maxRedirects int
	checkRobots  bool                                   // false for robots.txt itself
	scope        func(u *url.URL) (ok bool, why string) // redirect targets it refuses are not fetched; nil: any

	hops      []string // every URL requested, in order
	body      []byte   // raw body of the final response
	truncated bool
	gotBody   bool

	// Set by the OnResponse callback from colly's view of the final response.
	status   int
	header   http.Header
	finalURL string
}

type stateKey struct{}

// collyStateKey is the key of the *fetchState in the call's colly.Context.
const collyStateKey = "simcrawl.fetchState"

func stateFrom(ctx context.Context) *fetchState {
	st, _ := ctx.Value(stateKey{}).(*fetchState)
	return st
}

// bodyTransport reads the final response body itself, raw and limited, and
// hands colly an empty body. That is the only way to get the bytes as sent:
// colly v2.3.0 transcodes every body whose Content-Type names a non-UTF-8
// charset (Response.fixCharset runs even with DetectCharset off), gunzips
// bodies whose Content-Type says gzip or whose path ends in .xml.gz, and cuts
// at MaxBodySize without telling. With an empty body fixCharset returns at
// once, and Uncompressed=true keeps colly's gzip branch off. The real headers
// are untouched, so colly's Response still carries them.
type bodyTransport struct {
	next http.RoundTripper
}

func (t *bodyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	st := stateFrom(req.Context())
	if st == nil {
		return t.next.RoundTrip(req)
	}
	st.hops = append(st.hops, withoutFragment(req.URL))
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if followable(resp) {
		// http.Client drains and closes it if it follows; if our redirect
		// check refuses, the error wins and the body is never wanted.
		return resp, nil
	}
	body, truncated, err := readLimited(resp.Body, st.limit)
	if cerr := resp.Body.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	// net/http undoes the gzip it asked for and drops the header; any
	// other encoding left on a page (br, zstd, deflate: never asked for)
	// would reach extraction as compressed bytes. Other statuses, and
	// empty bodies (net/http leaves their header), are judged as before.
	if ce := resp.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") &&
		len(body) > 0 && resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return nil, fmt.Errorf("read body: %w %q", errUnsupportedEncoding, ce)
	}
	st.body, st.truncated, st.gotBody = body, truncated, true
	resp.Body = http.NoBody
	resp.ContentLength = 0
	resp.Uncompressed = true
	return resp, nil
}

// errUnsupportedEncoding is a response body in a Content-Encoding the
// fetcher cannot undo.
var errUnsupportedEncoding = errors.New("unsupported content encoding")

// followable mirrors http.Client's decision to follow a redirect for GET.
func followable(resp *http.Response) bool {
	return followsLocation(resp.StatusCode) && resp.Header.Get("Location") != ""
}

// followsLocation reports whether status is one of the redirects a GET
// follows to its Location (not 300 or 304).
func followsLocation(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// readLimited reads at most limit bytes of r; it reads one byte more to know
// whether the body was longer, and reports that as truncated.
func readLimited(r io.Reader, limit int64) ([]byte, bool, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(b)) > limit {
		return b[:limit:limit], true, nil
	}
	return b, false, nil
}
