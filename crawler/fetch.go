package crawler

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gocolly/colly/v2"
)

// FetchOptions configures a Fetcher; NewFetcher copies it, so later changes
// have no effect. Start from DefaultFetchOptions: the zero value of
// RespectRobots is false, so a literal FetchOptions{} ignores robots.txt.
// Zero durations and sizes take the defaults below.
type FetchOptions struct {
	UserAgent string // sent on every request, robots.txt included
	// RobotsAgent is the product token matched against robots.txt
	// User-agent lines; default: UserAgent up to the first '/' or space.
	RobotsAgent   string
	Timeout       time.Duration // per request, redirects and body included; default 30s
	MaxBodySize   int64         // bytes kept per body; longer bodies are cut and marked Truncated; default 10 MiB
	RespectRobots bool          // obey robots.txt; DefaultFetchOptions sets it
	MaxRedirects  int           // redirects followed per fetch; default 10
	RobotsTTL     time.Duration // how long a fetched robots.txt is trusted; default 24h (RFC 9309)
	Transport     http.RoundTripper
}

// Defaults of FetchOptions.
const (
	DefaultUserAgent    = "simcrawl/0.1 (+https://github.com/simcrawl/simcrawl)"
	DefaultTimeout      = 30 * time.Second
	DefaultMaxBodySize  = 10 << 20
	DefaultMaxRedirects = 10
	DefaultRobotsTTL    = 24 * time.Hour

	// robotsMaxBytes is what we read of a robots.txt: RFC 9309 asks
	// crawlers to parse at least 500 KiB.
	robotsMaxBytes = 512 << 10
	// robotsMaxRedirects is RFC 9309's "at least five" redirects.
	robotsMaxRedirects = 5
	// maxBodySizeLimit keeps limit+1 and colly's int MaxBodySize sane.
	maxBodySizeLimit = 1 << 40
)

// DefaultFetchOptions returns the documented defaults, robots.txt obeyed.
func DefaultFetchOptions() FetchOptions {
	return FetchOptions{
		UserAgent:     DefaultUserAgent,
		Timeout:       DefaultTimeout,
		MaxBodySize:   DefaultMaxBodySize,
		RespectRobots: true,
		MaxRedirects:  DefaultMaxRedirects,
		RobotsTTL:     DefaultRobotsTTL,
	}
}

// Response is one fetched page. Body holds the bytes as the server sent them
// (after HTTP Content-Encoding is undone by net/http), never transcoded. A
// Response belongs to the caller; the Fetcher keeps no reference to it.
type Response struct {
	URL         string      // the requested URL, fragment removed
	FinalURL    string      // the URL that answered after redirects
	Status      int         // status of the final response
	Header      http.Header // headers of the final response
	ContentType string      // Header's Content-Type, verbatim
	Body        []byte      // at most MaxBodySize bytes
	Truncated   bool        // the body was longer than MaxBodySize and was cut
	// Redirects lists the URLs that answered with a redirect, in order,
	// starting with URL; FinalURL is not in it. Empty without redirects.
	Redirects []string
	FetchedAt time.Time // when the final response was read
}

// Fetcher fetches one URL per call with colly underneath. It is safe for
// concurrent use by any number of goroutines; it keeps no per-URL state
// (deduplication and politeness belong to the frontier) other than a
// per-host robots.txt cache.
type Fetcher struct {
	opts FetchOptions
	// base is a configured colly.Collector used only as a template: every
	// call works on base.Clone(), whose Context carries that call's ctx. It
	// is never mutated after NewFetcher, so concurrent Clone calls only read.
	base   *colly.Collector
	robots *robotsCache
}

// NewFetcher checks o, fills in defaults and builds the colly collector.
func NewFetcher(o FetchOptions) (*Fetcher, error) {
	if o.Timeout < 0 || o.MaxBodySize < 0 || o.MaxRedirects < 0 || o.RobotsTTL < 0 {
		return nil, errors.New("crawler: negative Timeout, MaxBodySize, MaxRedirects or RobotsTTL")
	}
	if o.MaxBodySize > maxBodySizeLimit {
		return nil, fmt.Errorf("crawler: MaxBodySize %d above %d", o.MaxBodySize, int64(maxBodySizeLimit))
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.RobotsAgent == "" {
		o.RobotsAgent = productToken(o.UserAgent)
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBodySize == 0 {
		o.MaxBodySize = DefaultMaxBodySize
	}
	if o.MaxRedirects == 0 {
		o.MaxRedirects = DefaultMaxRedirects
	}
	if o.RobotsTTL == 0 {
		o.RobotsTTL = DefaultRobotsTTL
	}
	next := o.Transport
	if next == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// Workers hit few hosts at once; keep enough idle connections per
		// host for the frontier's per-host parallelism.
		t.MaxIdleConnsPerHost = 16
		next = t
	}
	f := &Fetcher{opts: o}
	f.robots = newRobotsCache(f, o.RobotsTTL)

	c := colly.NewCollector()
	// NewCollector applies COLLY_* environment variables last; set every
	// field we depend on explicitly so the environment cannot change them.
	c.UserAgent = o.UserAgent
	c.Headers = nil
	c.MaxDepth = 0
	c.MaxRequests = 0
	c.AllowedDomains = nil
	c.DisallowedDomains = nil
	c.DisallowedURLFilters = nil
	c.URLFilters = nil
	c.AllowURLRevisit = true // the visited check is racy and marks before fetching: the frontier dedups
	c.MaxBodySize = int(o.MaxBodySize + 1)
	c.CacheDir = ""
	c.IgnoreRobotsTxt = true // colly allows all on a 5xx robots.txt: robots.go does it
	c.Async = false          // Async parks a goroutine per URL: our workers call synchronously
	c.ParseHTTPErrorResponse = true
	c.DetectCharset = false
	c.CheckHead = false
	c.TraceHTTP = false
	// No cookie jar: cookies would make pages depend on crawl order and the
	// jar grows without bound over a large crawl.
	c.SetClient(&http.Client{Transport: &bodyTransport{next: next}, Timeout: o.Timeout})
	// After SetClient: it installs CheckRedirect on the current client.
	c.SetRedirectHandler(f.checkRedirect)
	f.base = c
	return f, nil
}

// productToken is the robots.txt name of a User-Agent: its first token,
// lower-cased ("simcrawl/0.1 (+url)" -> "simcrawl").
func productToken(ua string) string {
	tok, _, _ := strings.Cut(strings.TrimSpace(ua), " ")
	tok, _, _ = strings.Cut(tok, "/")
	return strings.ToLower(tok)
}

// Fetch GETs rawURL once and returns the final response after redirects.
//
// A final status outside 2xx gives both the *Response and a *FetchError of
// Kind "status". Every other failure returns a nil *Response and a
// *FetchError: robots.txt forbids the URL or a redirect target
// ("disallowed", wrapping ErrDisallowed), robots.txt could not be read
// ("robots-unavailable": the page was not requested), redirect loops and
// limits, timeouts, connection errors, a bad URL, a redirect out of the
// scope ctx carries ("out-of-scope", see WithRedirectScope), or ctx ending
// ("canceled", wrapping ctx's cause). Fetch returns promptly when ctx ends.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (*Response, error) {
	u, err := parseFetchURL(rawURL)
	if err != nil {
		return nil, &FetchError{Kind: KindBadURL, URL: rawURL, Err: err}
	}
	target := u.String()
	if err := ctx.Err(); err != nil {
		return nil, &FetchError{Kind: KindCanceled, URL: target, Err: context.Cause(ctx)}
	}
	if f.opts.RespectRobots {
		if err := f.robots.allow(ctx, u); err != nil {
			return nil, err
		}
	}
	st := &fetchState{limit: f.opts.MaxBodySize, maxRedirects: f.opts.MaxRedirects, checkRobots: f.opts.RespectRobots}
	st.scope, _ = ctx.Value(redirectScopeKey{}).(func(*url.URL) (bool, string))
	if err := f.do(ctx, target, st); err != nil {
		return nil, err
	}
	resp := &Response{
		URL:         target,
		FinalURL:    st.finalURL,
		Status:      st.status,
		Header:      st.header,
		ContentType: st.header.Get("Content-Type"),
		Body:        st.body,
		Truncated:   st.truncated,
		FetchedAt:   time.Now(),
	}
	if len(st.hops) > 1 {
		resp.Redirects = st.hops[:len(st.hops)-1]
	}
	if st.status < 200 || st.status > 299 {
		var why error
		if followsLocation(st.status) && st.header.Get("Location") == "" {
			why = errors.New("a redirect without a Location header")
		}
		return resp, &FetchError{
			Kind:       KindStatus,
			URL:        st.finalURL,
			Status:     st.status,
			RetryAfter: parseRetryAfter(st.header.Get("Retry-After"), resp.FetchedAt),
			Err:        why,
		}
	}
	return resp, nil
}

// do runs one GET through a clone of the base collector and fills st. The
// clone's Context is ctx with our Timeout and st attached, so cancellation
// reaches net/http, and our transport and redirect check find st; the call's
// own colly.Context carries st to the colly callbacks.
func (f *Fetcher) do(ctx context.Context, target string, st *fetchState) error {
	rctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	c := f.base.Clone()
	c.Context = context.WithValue(rctx, stateKey{}, st)
	c.OnResponse(onResponse)
	cctx := colly.NewContext()
	cctx.Put(collyStateKey, st)
	err := c.Request(http.MethodGet, target, nil, cctx, nil)
	if err == nil && (!st.gotBody || st.status == 0) {
		// Cannot happen with colly v2.3.0 in synchronous mode; guard anyway
		// rather than return an empty page as if it were real.
		err = errors.New("crawler: colly returned without a response")
	}
	if err != nil {
		return classify(ctx, target, err, len(st.hops) > 0)
	}
	return nil
}

// onResponse records colly's view of the final response in the call's state.
// It finds the state through r.Ctx, which is fresh for every call: never
// through anything shared between calls.
func onResponse(r *colly.Response) {
	st, ok := r.Ctx.GetAny(collyStateKey).(*fetchState)
	if !ok {
		return
	}
	st.status = r.StatusCode
	st.header = http.Header{}
	if r.Headers != nil && *r.Headers != nil {
		st.header = *r.Headers
	}
	st.finalURL = withoutFragment(r.Request.URL) // a Location header may carry one
}

// checkRedirect is colly's redirect handler (http.Client.CheckRedirect):
// loop detection, the redirect limit, and robots.txt for every target, so
// that the final URL is always one robots.txt allows.
func (f *Fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	st := stateFrom(req.Context())
	if st == nil {
		return errors.New("crawler: redirect outside a fetch")
	}
	next := withoutFragment(req.URL)
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return &FetchError{Kind: KindBadURL, URL: next, Err: fmt.Errorf("crawler: redirect to scheme %q", req.URL.Scheme)}
	}
	for _, v := range via {
		if withoutFragment(v.URL) == next {
			return &FetchError{Kind: KindRedirectLoop, URL: next, Err: fmt.Errorf("crawler: redirect chain %s", chain(via, next))}
		}
	}
	if len(via) > st.maxRedirects {
		return &FetchError{Kind: KindTooManyRedirects, URL: next, Err: fmt.Errorf("crawler: more than %d redirects: %s", st.maxRedirects, chain(via, next))}
	}
	if st.scope != nil {
		if ok, why := st.scope(req.URL); !ok {
			return &FetchError{Kind: KindOutOfScope, URL: next, Err: fmt.Errorf("redirect from %s out of the crawl's scope: %s", withoutFragment(via[0].URL), why)}
		}
	}
	if st.checkRobots {
		return f.robots.allow(req.Context(), req.URL)
	}
	return nil
}

// redirectScopeKey carries the scope of WithRedirectScope.
type redirectScopeKey struct{}

// WithRedirectScope returns ctx carrying a scope for Fetch: a redirect to
// a URL scope refuses (given the target as requested, with the reason
// why) is not followed, and the fetch fails with Kind "out-of-scope". The
// crawl checks its links against its Scope before queueing them; this
// holds redirects to the same rules.
func WithRedirectScope(ctx context.Context, scope func(u *url.URL) (ok bool, why string)) context.Context {
	return context.WithValue(ctx, redirectScopeKey{}, scope)
}

func chain(via []*http.Request, next string) string {
	var b strings.Builder
	for _, v := range via {
		b.WriteString(withoutFragment(v.URL))
		b.WriteString(" -> ")
	}
	b.WriteString(next)
	return b.String()
}

func withoutFragment(u *url.URL) string {
	c := *u
	c.Fragment, c.RawFragment = "", ""
	return c.String()
}

// parseFetchURL accepts absolute http and https URLs and drops the fragment,
// which colly would otherwise keep.
func parseFetchURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, err
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("crawler: scheme %q is not http or https", u.Scheme)
	}
	if u.Host == "" {
		return nil, errors.New("crawler: URL has no host")
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}
