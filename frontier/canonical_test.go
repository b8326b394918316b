package frontier

import (
	"errors"
	"strings"
	"testing"
)

func TestCanonical(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"case", "HTTP://Example.COM/Path", "http://example.com/Path"},
		{"default http port", "http://example.com:80/", "http://example.com/"},
		{"default https port", "https://example.com:443/a", "https://example.com/a"},
		{"other port kept", "http://example.com:8080/a", "http://example.com:8080/a"},
		{"https on 80 kept", "https://example.com:80/", "https://example.com:80/"},
		{"fragment", "http://example.com/a#top", "http://example.com/a"},
		{"empty path", "http://example.com", "http://example.com/"},
		{"decoded hex digit after a stray percent", "http://example.com/a%7%41", "http://example.com/a%7%41"},
		{"decoded hex digits after a bare percent", "http://example.com/%%41%42", "http://example.com/%%41B"},
		{"dot segments", "http://example.com/a/./b/../c", "http://example.com/a/c"},
		{"escaped dot segments", "http://example.com/a/%2e%2E/b", "http://example.com/b"},
		{"above root", "http://example.com/../../a", "http://example.com/a"},
		{"sorted query", "http://example.com/?b=2&a=1&c", "http://example.com/?a=1&b=2&c"},
		{"stable for repeated names", "http://example.com/?b=2&a=z&b=1&a=y", "http://example.com/?a=z&a=y&b=2&b=1"},
		{"empty query", "http://example.com/a?", "http://example.com/a"},
		{"empty params", "http://example.com/a?&b=1&&a=2&", "http://example.com/a?a=2&b=1"},
		{"plus kept", "http://example.com/?q=a+b&r=a%2Bb", "http://example.com/?q=a+b&r=a%2Bb"},
		{"unreserved decoded", "http://example.com/%7Euser/%41%2d?%61=%7e", "http://example.com/~user/A-?a=~"},
		{"reserved kept", "http://example.com/a%2fb?x=%26%3d", "http://example.com/a%2Fb?x=%26%3D"},
		{"non-ASCII path", "http://example.com/新闻/页", "http://example.com/%E6%96%B0%E9%97%BB/%E9%A1%B5"},
		{"non-ASCII path lower hex", "http://example.com/%e6%96%b0%e9%97%bb/%E9%A1%B5", "http://example.com/%E6%96%B0%E9%97%BB/%E9%A1%B5"},
		{"non-ASCII query", "http://example.com/s?q=中文", "http://example.com/s?q=%E4%B8%AD%E6%96%87"},
		{"IDN", "http://例子.测试/", "http://xn--fsqu00a.xn--0zwm56d/"},
		{"IDN upper case", "http://BÜCHER.example/", "http://xn--bcher-kva.example/"},
		{"punycode kept", "http://xn--fsqu00a.xn--0zwm56d/", "http://xn--fsqu00a.xn--0zwm56d/"},
		{"user info dropped", "http://user:pw@example.com/", "http://example.com/"},
		{"space in path", "http://example.com/a b", "http://example.com/a%20b"},
		{"backslash", `http://example.com\a\b`, "http://example.com/a/b"},
		{"bad escape kept", "http://example.com/%zz%", "http://example.com/%zz%"},
		{"IPv4 normalised", "http://0x7f.1/", "http://127.0.0.1/"},
		{"IPv6", "http://[0:0::1]:8080/", "http://[::1]:8080/"},
		{"surrounding space", "  http://example.com/a  ", "http://example.com/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Canonical(tt.in)
			if err != nil {
				t.Fatalf("Canonical(%q) error %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("Canonical(%q) = %q, want %q", tt.in, got, tt.want)
			}
			again, err := Canonical(got)
			if err != nil || again != got {
				t.Errorf("Canonical(%q) = %q, %v; not a fixed point", got, again, err)
			}
		})
	}
}

func TestCanonicalRejects(t *testing.T) {
	for _, in := range []string{
		"",
		"/relative/path",
		"example.com/a",
		"mailto:someone@example.com",
		"javascript:alert(1)",
		"ftp://example.com/",
		"file:///etc/passwd",
		"data:text/html,hi",
		"http://",
		"http://a b/",
		"http://exa mple.com/",
		"http://[::1/",
		"http://example.com:99999/",
		"http://" + strings.Repeat("a", 10) + "/" + strings.Repeat("x", MaxURLLength),
		"http://example.com/" + strings.Repeat("a/", MaxURLLength), // too long to parse
	} {
		got, err := Canonical(in)
		if err == nil {
			t.Errorf("Canonical(%q) = %q, want an error", clip(in), got)
			continue
		}
		if !errors.Is(err, ErrBadURL) {
			t.Errorf("Canonical(%q) error %v does not wrap ErrBadURL", clip(in), err)
		}
	}
}

func TestHostKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://example.com/a", "example.com"},
		{"https://example.com/a", "example.com"},
		{"http://example.com:8080/a?b", "example.com:8080"},
		{"http://[::1]:8080/", "[::1]:8080"},
		{"http://example.com", "example.com"},
		{"http://example.com?x", "example.com"},
		{"ftp://example.com/", ""},
		{"example.com/a", ""},
		{"http:///a", ""},
	}
	for _, tt := range tests {
		if got := HostKey(tt.in); got != tt.want {
			t.Errorf("HostKey(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzCanonical(f *testing.F) {
	for _, s := range []string{
		"http://example.com/a/./b/../c?b=2&a=1#f",
		"https://例子.测试/新闻/页?q=中文",
		"http://example.com/%e6%96%b0/%7e?%41=%2b",
		"http://[::1]:80/",
		"http://0x7f.1/%2e%2e/",
		"http://u@x.com\\a\\b?&&",
		"http://x.com/%zz%%",
		"http://x.com/\xff\xfe",
		"HTTPS://X.COM:443",
		"mailto:x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := Canonical(in)
		if err != nil {
			if !errors.Is(err, ErrBadURL) {
				t.Fatalf("Canonical(%q) error %v does not wrap ErrBadURL", in, err)
			}
			return
		}
		again, err := Canonical(got)
		if err != nil {
			t.Fatalf("Canonical(%q) = %q, which is rejected: %v", in, got, err)
		}
		if again != got {
			t.Fatalf("Canonical(%q) = %q, but Canonical of that = %q", in, got, again)
		}
		if HostKey(got) == "" {
			t.Fatalf("HostKey(%q) is empty", got)
		}
		if err := validate(Item{URL: got}); err != nil {
			t.Fatalf("Add would reject canonical %q: %v", got, err)
		}
	})
}
