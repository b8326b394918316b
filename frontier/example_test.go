package frontier_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/frontier"
)

func Example() {
	dir, err := os.MkdirTemp("", "frontier-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := bolt.Open(filepath.Join(dir, "crawl.db"), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	ctx := context.Background()
	f, err := frontier.New(db, frontier.Options{PerHostDelay: time.Millisecond})
	if err != nil {
		log.Fatal(err)
	}
	seed, err := frontier.Canonical("HTTP://Example.COM:80/news/../index.html#top")
	if err != nil {
		log.Fatal(err)
	}
	if _, err := f.Add(ctx, frontier.Item{URL: seed, Seed: true}); err != nil {
		log.Fatal(err)
	}
	for {
		it, err := f.Next(ctx)
		if errors.Is(err, frontier.ErrDrained) {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("fetch", it.URL, "depth", it.Depth)
		// The crawler stores the page, then completes it and queues its
		// links in the same write transaction.
		err = db.Update(func(tx *bolt.Tx) error {
			if it.Depth == 0 {
				link, err := frontier.Canonical("http://example.com/b?z=1&a=2")
				if err != nil {
					return err
				}
				if _, err := f.AddTx(tx, frontier.Item{URL: link, Depth: 1, Source: it.URL}); err != nil {
					return err
				}
			}
			return f.DoneTx(tx, it, "stored")
		})
		if err != nil {
			log.Fatal(err)
		}
	}
	st, err := f.State(ctx, seed)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(seed, st)
	fmt.Printf("%+v\n", f.Stats())
	// Output:
	// fetch http://example.com/index.html depth 0
	// fetch http://example.com/b?a=2&z=1 depth 1
	// http://example.com/index.html done:stored
	// {Pending:0 InFlight:0 Done:2 Failed:0 Hosts:0}
}
