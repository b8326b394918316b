package crawler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/temoto/robotstxt"
)

// robotsCache holds the robots.txt rules for our agent per host (host[:port],
// lower-cased; http and https share an entry). We do robots ourselves because
// colly ignores robots.txt by default and, when asked to obey it, treats a 5xx
// robots.txt as "allow everything" and caches it forever.
//
// Policy (RFC 9309): 2xx is parsed; 4xx allows all; a redirect loop or more
// than five redirects allows all; 429, 5xx, network errors and timeouts are
// "robots-unavailable", a retryable error, never "allow all". Failures are
// not cached: the next call for the host tries again. Concurrent callers for
// one host share a single request. Entries are replaced after ttl; they are
// never evicted, so memory grows with the number of distinct hosts.
//
// Safe for concurrent use.
type robotsCache struct {
	f   *Fetcher
	ttl time.Duration
	now func() time.Time // time.Now; tests replace it before first use

	mu      sync.Mutex
	entries map[string]*robotsEntry // guarded by mu
}

type robotsEntry struct {
	ready chan struct{} // closed when the fields below are final
	group *robotstxt.Group
	err   error
	// expires is written before ready is closed and read only after.
	expires time.Time
}

func newRobotsCache(f *Fetcher, ttl time.Duration) *robotsCache {
	return &robotsCache{f: f, ttl: ttl, now: time.Now, entries: make(map[string]*robotsEntry)}
}

func (e *robotsEntry) done() bool {
	select {
	case <-e.ready:
		return true
	default:
		return false
	}
}

// allow returns nil when robots.txt lets our agent fetch u, a *FetchError of
// Kind "disallowed" wrapping ErrDisallowed when it does not, and the
// robots-unavailable or canceled *FetchError when robots.txt cannot be read.
func (rc *robotsCache) allow(ctx context.Context, u *url.URL) error {
	g, err := rc.get(ctx, u.Scheme, u.Host)
	if err != nil {
		return err
	}
	if !g.Test(robotsPath(u)) {
		return &FetchError{Kind: KindDisallowed, URL: withoutFragment(u), Err: ErrDisallowed}
	}
	return nil
}

// robotsPath is what robots.txt rules match: the escaped path and query.
func robotsPath(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return p
}

// get returns our agent's group for host, fetching robots.txt at most once
// per ttl however many goroutines ask.
func (rc *robotsCache) get(ctx context.Context, scheme, host string) (*robotstxt.Group, error) {
	key := strings.ToLower(host)
	for {
		rc.mu.Lock()
		e := rc.entries[key]
		if e == nil || (e.done() && rc.now().After(e.expires)) {
			e = &robotsEntry{ready: make(chan struct{})}
			rc.entries[key] = e
			rc.mu.Unlock()
			rc.load(ctx, key, e, scheme, host)
			return e.group, e.err
		}
		rc.mu.Unlock()
		select {
		case <-e.ready:
		case <-ctx.Done():
			return nil, &FetchError{Kind: KindCanceled, URL: scheme + "://" + host + "/robots.txt", Err: context.Cause(ctx)}
		}
		var fe *FetchError
		if errors.As(e.err, &fe) && fe.Kind == KindCanceled && ctx.Err() == nil {
			continue // the goroutine that fetched gave up, not the server
		}
		return e.group, e.err
	}
}

func (rc *robotsCache) load(ctx context.Context, key string, e *robotsEntry, scheme, host string) {
	defer close(e.ready)
	e.group, e.err = rc.f.fetchRobots(ctx, scheme, host)
	e.expires = rc.now().Add(rc.ttl)
	if e.err != nil {
		rc.mu.Lock()
		if rc.entries[key] == e {
			delete(rc.entries, key)
		}
		rc.mu.Unlock()
	}
}

// fetchRobots GETs robots.txt through the same collector, client and
// User-Agent as pages, and returns the group that applies to our agent.
func (f *Fetcher) fetchRobots(ctx context.Context, scheme, host string) (*robotstxt.Group, error) {
	target := scheme + "://" + host + "/robots.txt"
	st := &fetchState{limit: robotsMaxBytes, maxRedirects: robotsMaxRedirects}
	if err := f.do(ctx, target, st); err != nil {
		var fe *FetchError
		if errors.As(err, &fe) {
			switch fe.Kind {
			case KindCanceled:
				return nil, fe
			case KindRedirectLoop, KindTooManyRedirects:
				// RFC 9309 2.3.1.2: may be treated as unavailable, i.e. 4xx.
				return allowAllGroup, nil
			}
		}
		return nil, &FetchError{Kind: KindRobotsUnavailable, URL: target, Err: err}
	}
	switch {
	case st.status >= 200 && st.status <= 299:
		data, err := parseRobots(st.body)
		if err != nil {
			return nil, &FetchError{Kind: KindRobotsUnavailable, URL: target, Status: st.status, Err: err}
		}
		return data.FindGroup(f.opts.RobotsAgent), nil
	case st.status >= 400 && st.status <= 499 && st.status != http.StatusTooManyRequests:
		return allowAllGroup, nil
	}
	// 5xx, 429 (a rate limit, not "no robots.txt"), or anything odd.
	return nil, &FetchError{
		Kind:       KindRobotsUnavailable,
		URL:        target,
		Status:     st.status,
		RetryAfter: parseRetryAfter(st.header.Get("Retry-After"), time.Now()),
	}
}

// allowAllGroup has no rules: every path is allowed, no Crawl-delay.
var allowAllGroup = &robotstxt.Group{}

// parseRobots parses robots.txt. temoto/robotstxt rejects a whole file for a
// single bad line (a rule before any User-agent, an unparsable Crawl-delay),
// where RFC 9309 parsers skip the line; so on error we drop such lines and
// parse once more.
func parseRobots(body []byte) (*robotstxt.RobotsData, error) {
	data, err := robotstxt.FromBytes(body)
	if err == nil {
		return data, nil
	}
	data, err2 := robotstxt.FromBytes(dropBadRobotsLines(body))
	if err2 != nil {
		return nil, fmt.Errorf("crawler: parse robots.txt: %w", err)
	}
	return data, nil
}

func dropBadRobotsLines(body []byte) []byte {
	var out bytes.Buffer
	seenAgent := false
	for line := range bytes.Lines(body) {
		content, _, _ := bytes.Cut(line, []byte("#"))
		key, val, ok := bytes.Cut(content, []byte(":"))
		if ok {
			switch strings.ToLower(string(bytes.TrimSpace(key))) {
			case "user-agent", "useragent":
				seenAgent = true
			case "allow", "disallow":
				if !seenAgent {
					continue
				}
			case "crawl-delay", "crawldelay":
				d, err := strconv.ParseFloat(string(bytes.TrimSpace(val)), 64)
				if !seenAgent || err != nil || d < 0 || math.IsInf(d, 0) || math.IsNaN(d) {
					continue
				}
			}
		}
		out.Write(line)
	}
	return out.Bytes()
}

// CrawlDelay returns the Crawl-delay robots.txt sets for our agent on host, 0
// when none (or when RespectRobots is off). host is "host[:port]" (robots.txt
// is then fetched over http, following any redirect to https) or a URL whose
// scheme and host are used. The value is uncapped: the caller caps it. It
// fails like Fetch when robots.txt cannot be read. Safe for concurrent use.
func (f *Fetcher) CrawlDelay(ctx context.Context, host string) (time.Duration, error) {
	if !f.opts.RespectRobots {
		return 0, nil
	}
	scheme, h, err := splitHost(host)
	if err != nil {
		return 0, &FetchError{Kind: KindBadURL, URL: host, Err: err}
	}
	g, err := f.robots.get(ctx, scheme, h)
	if err != nil {
		return 0, err
	}
	if g.CrawlDelay < 0 {
		// temoto/robotstxt overflows on absurd values: treat as "very long".
		return time.Duration(math.MaxInt64), nil
	}
	return g.CrawlDelay, nil
}

func splitHost(host string) (scheme, h string, err error) {
	if strings.Contains(host, "://") {
		u, err := parseFetchURL(host)
		if err != nil {
			return "", "", err
		}
		return u.Scheme, u.Host, nil
	}
	u, err := url.Parse("http://" + host)
	if err != nil || u.Host != host || host == "" {
		return "", "", fmt.Errorf("crawler: %q is not a host[:port]", host)
	}
	return "http", host, nil
}
