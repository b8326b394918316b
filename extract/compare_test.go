package extract

import (
	"bytes"
	"net/url"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	readeck "codeberg.org/readeck/go-readability/v2"
	shiori "github.com/go-shiori/go-readability"
)

// TestCompareReadability measures the two readability ports on the
// readability corpus, each given the raw page and asked for its text:
// token F1 against expected.html and CPU time. It informed the choice in
// doc.go; run it with EXTRACT_COMPARE=1 go test -run TestCompareReadability -v.
func TestCompareReadability(t *testing.T) {
	if os.Getenv("EXTRACT_COMPARE") == "" {
		t.Skip("set EXTRACT_COMPARE=1 to compare go-shiori and readeck")
	}
	type contender struct {
		name string
		text func(body []byte, u *url.URL) string
	}
	contenders := []contender{
		{"codeberg.org/readeck/go-readability/v2 v2.1.1", func(body []byte, u *url.URL) string {
			p := readeck.NewParser()
			art, err := p.Parse(bytes.NewReader(body), u)
			if err != nil || art.Node == nil {
				return ""
			}
			var b strings.Builder
			if err := art.RenderText(&b); err != nil {
				return ""
			}
			return b.String()
		}},
		{"github.com/go-shiori/go-readability", func(body []byte, u *url.URL) string {
			p := shiori.NewParser()
			art, err := p.Parse(bytes.NewReader(body), u)
			if err != nil {
				return ""
			}
			return art.TextContent
		}},
		{"extract.ExtractBytes (readeck + cleaning + fallback)", func(body []byte, u *url.URL) string {
			d, err := ExtractBytes(body, "text/html", u, Options{})
			if err != nil {
				return ""
			}
			return d.Text
		}},
	}
	for _, c := range contenders {
		var cpu, wall time.Duration
		timed := func(body []byte, u *url.URL) string {
			cpu0, wall0 := cpuTime(), time.Now()
			defer func() { cpu, wall = cpu+cpuTime()-cpu0, wall+time.Since(wall0) }()
			return c.text(body, u)
		}
		timed(nil, &url.URL{}) // warm up
		// Collect the previous contender's garbage now, so that it
		// is not charged to this one's CPU time.
		runtime.GC()
		cpu, wall = 0, 0
		scores := scoreReadability(t, timed)
		t.Logf("== %s", c.name)
		summarise(t, scores)
		t.Logf("%d pages: %.2fs CPU (%.0f pages/cpu-s), %.2fs wall", len(scores), cpu.Seconds(), float64(len(scores))/cpu.Seconds(), wall.Seconds())
	}
}
