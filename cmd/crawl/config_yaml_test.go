package main

import "testing"

// Anchors and merge keys reach the kind check like any other value, and a
// value named by several aliases is reported once.
func TestConfigAnchors(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"aliased twice", "scope:\n  max_depth: &d 2.5\n  max_pages: *d\nfetch:\n  retries: *d\n", `line 2: "2.5" is not a whole number`},
		{"merged fraction", "fetch:\n  <<: {parallelism: 2.5}\n", `line 2: "2.5" is not a whole number`},
		{"merged from an anchor", "fetch: &f {per_host: 2.5}\nlog:\n  <<: *f\n",
			`line 1: "2.5" is not a whole number; line 1: unknown key log.per_host (did you mean fetch.per_host?)`},
		{"anchor holding itself", "scope:\n  include: &x [*x]\n", "line 2: a list is not a string"},
	} {
		cfg := defaultConfig()
		if err := decodeStrict([]byte(tc.doc), &cfg); err == nil || err.Error() != tc.want {
			t.Errorf("%s: decodeStrict = %v, want %q", tc.name, err, tc.want)
		}
	}
	cfg := defaultConfig()
	if err := decodeStrict([]byte("fetch:\n  <<: [{parallelism: 3, per_host: 3}]\n  per_host: 4\n"), &cfg); err != nil ||
		cfg.Fetch.Parallelism != 3 || cfg.Fetch.PerHost != 4 {
		t.Errorf("merge key: parallelism %d, per_host %d, %v; want 3, 4, nil", cfg.Fetch.Parallelism, cfg.Fetch.PerHost, err)
	}
	// A merged value the mapping overrides is never used, so never checked.
	cfg = defaultConfig()
	if err := decodeStrict([]byte("fetch: {<<: {parallelism: 2.5}, parallelism: 3}\n"), &cfg); err != nil || cfg.Fetch.Parallelism != 3 {
		t.Errorf("overridden merged fraction: parallelism %d, %v; want 3, nil", cfg.Fetch.Parallelism, err)
	}
}
