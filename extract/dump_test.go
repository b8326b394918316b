package extract

import (
	"fmt"
	"net/url"
	"os"
	"testing"
)

// TestDump prints what Extract makes of $EXTRACT_DUMP, for debugging.
func TestDump(t *testing.T) {
	p := os.Getenv("EXTRACT_DUMP")
	if p == "" {
		t.Skip("set EXTRACT_DUMP=file.html")
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("http://fakehost/a/b.html")
	d, err := ExtractBytes(b, "", u, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("title %q lang %q charset %q fallback %v links %d\n---\n%s\n", d.Title, d.Lang, d.Charset, d.Fallback, len(d.Links), d.Text)
}
