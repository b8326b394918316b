package crawler

import (
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ErrDisallowed is wrapped by a *FetchError of Kind "disallowed" when
// robots.txt forbids a URL (the requested one or any redirect target).
var ErrDisallowed = errors.New("robots.txt forbids this path to our user agent")

// Kinds of *FetchError. The strings are stable: they end up in logs and in
// the frontier's failure records.
const (
	KindTimeout           = "timeout"
	KindConnection        = "connection"
	KindStatus            = "status"
	KindRobotsUnavailable = "robots-unavailable"
	KindRedirectLoop      = "redirect-loop"
	KindTooManyRedirects  = "too-many-redirects"
	KindDisallowed        = "disallowed"
	KindOutOfScope        = "out-of-scope" // a redirect left the scope the caller gave (WithRedirectScope)
	KindBadEncoding       = "bad-encoding" // the body does not decode as its Content-Encoding says
	KindBadURL            = "bad-url"
	// KindCanceled means the caller's ctx ended before the fetch finished:
	// the URL was not judged and should stay pending (it is Retryable).
	KindCanceled = "canceled"
)

// FetchError is the error returned by Fetcher.Fetch and Fetcher.CrawlDelay.
// Callers decide between "retry later" and "record as failed" with Retryable.
// It is not modified after it is returned, so it may be read concurrently.
type FetchError struct {
	Kind       string        // one of the Kind* constants
	URL        string        // the URL being fetched when it failed (may be a redirect target or a robots.txt)
	Status     int           // HTTP status for Kind "status" (and robots-unavailable after a 5xx)
	RetryAfter time.Duration // from a Retry-After header, 0 when absent or unparsable
	Err        error         // the cause, may be nil for Kind "status"
}

func (e *FetchError) Error() string {
	var b strings.Builder
	b.WriteString("crawler: fetch ")
	b.WriteString(e.URL)
	b.WriteString(": ")
	e.writeCause(&b)
	return b.String()
}

// writeCause writes the kind, status and cause. A cause that is itself a
// *FetchError for the same URL (robots-unavailable wraps the failed
// robots.txt fetch) is written without its "crawler: fetch URL: " prefix,
// and a *url.Error for the same URL without its `Get "URL": `,
// so the URL is named once and the outer kind, which scripts read, leads.
func (e *FetchError) writeCause(b *strings.Builder) {
	b.WriteString(e.Kind)
	switch {
	case e.Kind == KindStatus:
		fmt.Fprintf(b, " %d", e.Status) // "status 404", not "status (status 404)"
	case e.Status != 0:
		fmt.Fprintf(b, " (status %d)", e.Status)
	}
	if e.Err == nil {
		return
	}
	b.WriteString(": ")
	if inner, ok := e.Err.(*FetchError); ok && inner.URL == e.URL {
		inner.writeCause(b)
		return
	}
	if ue, ok := e.Err.(*url.Error); ok && ue.URL == e.URL && ue.Err != nil {
		// net/http's `Get "URL": ` would name the URL a second time.
		b.WriteString(ue.Err.Error())
		return
	}
	b.WriteString(e.Err.Error())
}

func (e *FetchError) Unwrap() error { return e.Err }

// Retryable reports whether trying the same URL later may succeed: timeouts,
// connection errors, 429, 5xx, an unreachable robots.txt and a canceled
// fetch are; other 4xx, robots disallow, redirect loops and bad URLs are not.
func (e *FetchError) Retryable() bool {
	switch e.Kind {
	case KindTimeout, KindConnection, KindRobotsUnavailable, KindCanceled:
		return true
	case KindStatus:
		return e.Status == http.StatusTooManyRequests || e.Status >= 500
	}
	return false
}

// classify turns an error from a colly request into a *FetchError. parent is
// the caller's ctx: when it has ended the fetch was canceled, whatever the
// transport says; otherwise a deadline is our own per-request Timeout.
func classify(parent context.Context, rawURL string, err error, sent bool) *FetchError {
	var fe *FetchError
	if errors.As(err, &fe) && (fe.Kind != KindCanceled || parent.Err() != nil) {
		// Raised by our redirect check or a nested robots.txt fetch. A
		// nested "canceled" while the caller's ctx is alive was our own
		// Timeout: fall through and report a timeout.
		return fe
	}
	if parent.Err() != nil {
		return &FetchError{Kind: KindCanceled, URL: rawURL, Err: context.Cause(parent)}
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return &FetchError{Kind: KindTimeout, URL: rawURL, Err: err}
	}
	if !sent || strings.Contains(err.Error(), "failed to parse Location header") {
		// colly refused the URL before any request went out (its own parser
		// or http.NewRequest), or net/http a Location it cannot parse (it
		// has no error value for it: the text is net/http's client.go,
		// Go 1.26, which TestFetchBadEncodingAndNoLocation pins): nothing
		// to retry.
		return &FetchError{Kind: KindBadURL, URL: rawURL, Err: err}
	}
	var corrupt flate.CorruptInputError
	if errors.Is(err, gzip.ErrHeader) || errors.Is(err, gzip.ErrChecksum) || errors.Is(err, zlib.ErrHeader) || errors.As(err, &corrupt) ||
		errors.Is(err, errUnsupportedEncoding) {
		// The server's Content-Encoding does not match its bytes: asking
		// again gets the same bytes.
		return &FetchError{Kind: KindBadEncoding, URL: rawURL, Err: err}
	}
	return &FetchError{Kind: KindConnection, URL: rawURL, Err: err}
}

// parseRetryAfter reads a Retry-After value: delta-seconds or an HTTP date.
// Garbage, negative values and dates in the past give 0.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		if secs > math.MaxInt64/int64(time.Second) {
			return time.Duration(math.MaxInt64)
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
