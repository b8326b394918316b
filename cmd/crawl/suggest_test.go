package main

import "testing"

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"delay", "delay", 0},
		{"dealy", "delay", 1}, // a swap is one edit
		{"delai", "delay", 1}, // a substitution
		{"dups", "dup", 1},    // a deletion
		{"stat", "stats", 1},  // an insertion
		{"ca", "abc", 3},      // optimal string alignment: no edit of a swapped pair
		{"茶园", "茶圆", 1},       // runes, not bytes
		{"kitten", "sitting", 3},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := editDistance(tc.b, tc.a); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d (symmetric)", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	cmds := []string{"crawl", "demo", "fingerprint", "distance", "extract", "failed", "export", "eval", "dups", "stats", "dedup", "index", "help"}
	for _, tc := range []struct {
		word string
		want string
	}{
		{"demp", "demo"},
		{"exprot", "export"},
		{"stat", "stats"},
		{"fingerprnt", "fingerprint"},
		{"Dups", "dups"},
		{"x", ""},     // nothing is one edit from x
		{"serve", ""}, // nothing close
		{"dedupe", "dedup"},
		{"", ""},
	} {
		if got := suggest(tc.word, cmds); got != tc.want {
			t.Errorf("suggest(%q, commands) = %q, want %q", tc.word, got, tc.want)
		}
	}
	keys := configKeys()
	for _, tc := range []struct{ word, want string }{
		{"fetch.dealy", "fetch.delay"},
		{"max_pages", "scope.max_pages"},
		{"scope.user_agent", "fetch.user_agent"},
		{"contentseen.kk", "contentseen.k"},
		{"feth", "fetch"},
		{"fetch.colour", ""},
	} {
		if got := suggest(tc.word, keys); got != tc.want {
			t.Errorf("suggest(%q, configKeys()) = %q, want %q", tc.word, got, tc.want)
		}
	}
}

// configKeys knows every key of the documented config.yaml.
func TestConfigKeys(t *testing.T) {
	keys := map[string]bool{}
	for _, k := range configKeys() {
		keys[k] = true
	}
	for _, k := range []string{"data", "drop_log", "scope", "scope.max_pages", "fetch.delay", "contentseen.layout", "store.keep_drop_text", "log.status_interval", "metrics"} {
		if !keys[k] {
			t.Errorf("configKeys() lacks %s", k)
		}
	}
}
