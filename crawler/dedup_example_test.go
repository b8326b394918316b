package crawler_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"strings"

	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/internal/demosite"
)

// records is a RecordSource over a slice.
type records []*crawler.Record

func (r *records) Next(context.Context) (*crawler.Record, error) {
	if len(*r) == 0 {
		return nil, io.EOF
	}
	rec := (*r)[0]
	*r = (*r)[1:]
	return rec, nil
}

// Deduplicate text records in batches: the copy of the first text under
// another URL is dropped, whichever batch each lands in.
func ExampleCrawler_DedupWith() {
	dir, err := os.MkdirTemp("", "crawler-dedup-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	c, err := crawler.Open(crawler.Options{DataDir: dir, K: 3})
	if err != nil {
		log.Fatal(err)
	}
	first := strings.Join(demosite.Words(1, 200), " ")
	src := records{
		{URL: "https://example.org/a", Text: first},
		{URL: "https://example.org/b", Text: strings.Join(demosite.Words(2, 200), " ")},
		{URL: "https://mirror.example/a", Text: first},
	}
	sum, err := c.DedupWith(context.Background(), &src, nil, crawler.DedupOptions{Batch: 2})
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("kept %d, dropped %d exact and %d near\n", sum.Run.Stored, sum.Run.DroppedExact, sum.Run.DroppedNear)
	// Output: kept 2, dropped 1 exact and 0 near
}
