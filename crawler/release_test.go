package crawler

import (
	"context"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/simcrawl/simcrawl/internal/demosite"
)

// TestMappedFileBytes reads the process's mapped file pages: on Linux at
// least its own executable's pages it runs from.
func TestMappedFileBytes(t *testing.T) {
	n, ok := mappedFileBytes()
	if runtime.GOOS != "linux" {
		if ok {
			t.Errorf("mappedFileBytes = %d, true outside Linux", n)
		}
		return
	}
	if !ok || n < 1<<20 {
		t.Errorf("mappedFileBytes = %d, %v; want at least the executable's pages", n, ok)
	}
}

// TestCrawlReleasingMappedPages crawls the demo site releasing the
// database's mapped pages after every commit: the crawl must store and
// drop exactly what it does without.
func TestCrawlReleasingMappedPages(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the mapping is released on Linux only")
	}
	srv := httptest.NewServer(demosite.New())
	defer srv.Close()
	opts := testOptions(t, srv.URL+"/")
	c, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	c.releaseEvery, c.mappedBudget = 0, -1
	_, err = c.Run(context.Background())
	releases := c.releases
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if releases == 0 {
		t.Error("the crawl never released its mapped pages")
	}
	checkDemoPages(t, readResult(t, opts.DataDir, srv.URL))
}
