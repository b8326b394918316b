package crawler

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/simcrawl/simcrawl/frontier"
)

// Domains match the hosts of canonical URLs however they are written:
// internationalised names (canonical URLs spell them in punycode), upper
// case, a trailing dot; the seeds' hosts, the default scope, too.
func TestScopeDomainsAsCanonicalURLsWriteThem(t *testing.T) {
	o := Options{Seeds: []string{"http://Bücher.example/start"}, Scope: Scope{DenyDomains: []string{"ALT.bücher.example."}}}
	o.setDefaults()
	for _, c := range []struct {
		raw  string
		want bool
	}{
		{"http://bücher.example/a", true},
		{"http://www.BÜCHER.example./b", true},
		{"http://alt.bücher.example/c", false},
		{"http://other.example/d", false},
	} {
		cu, err := frontier.Canonical(c.raw)
		if err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(cu)
		if err != nil {
			t.Fatal(err)
		}
		if ok, why := o.Scope.Allows(u); ok != c.want {
			t.Errorf("Allows(%s) = %v (%s), want %v", cu, ok, why, c.want)
		}
	}
}

// A scope domain written as a URL, a path, a pattern or with a port is an
// error naming it, not a rule that silently matches nothing (or more).
func TestScopeDomainsMustBeHostNames(t *testing.T) {
	for _, d := range []string{"http://example.com", "example.com/news", "*.example.com", "example.com:8080"} {
		_, err := Open(Options{DataDir: t.TempDir(), K: 3, Scope: Scope{AllowDomains: []string{d}}})
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("allow_domains entry %q", d)) {
			t.Errorf("Open with allow_domains %q: %v, want an error naming it", d, err)
		}
	}
	for _, d := range []string{"example.com", "bücher.example", "127.0.0.1", "::1", "[::1]", "localhost"} {
		c, err := Open(Options{DataDir: t.TempDir(), K: 3, Scope: Scope{DenyDomains: []string{d}}})
		if err != nil {
			t.Errorf("Open with deny_domains %q: %v", d, err)
			continue
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
