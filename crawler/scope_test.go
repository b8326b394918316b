package crawler

import (
	"net/url"
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
