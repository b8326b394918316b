package crawler_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"os"

	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/internal/demosite"
)

// Crawl the demo site (articles, a mirror, syndicated copies, a repost)
// and count what was kept and what was dropped as a duplicate.
func Example() {
	srv := httptest.NewServer(demosite.New())
	defer srv.Close()
	dir, err := os.MkdirTemp("", "crawler-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	seeds := []string{srv.URL + "/"}
	c, err := crawler.Open(crawler.Options{
		Seeds:       seeds,
		DataDir:     dir,
		Scope:       crawler.Scope{AllowDomains: crawler.SeedHosts(seeds)},
		MaxDepth:    5,
		Parallelism: 1, // breadth-first order, so the originals are kept
		Fetch:       crawler.DefaultFetchOptions(),
		K:           3,
	})
	if err != nil {
		log.Fatal(err)
	}
	sum, err := c.Run(context.Background())
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d pages stored, %d dropped as duplicates\n", sum.Pages, sum.Drops)
	// Output: 8 pages stored, 4 dropped as duplicates
}
