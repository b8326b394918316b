package redisfrontier

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/frontier"
)

// Two workers of one crawl share the queue: the seed, taken by one, queues
// a link that the other takes, and both see the crawl drain.
func Example() {
	ctx := context.Background()
	addr := sharedAddr // a redis-server's host:port (the tests start one)
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()

	o := Options{
		Options: frontier.Options{PerHostInFlight: 1, PerHostDelay: time.Millisecond},
		Name:    fmt.Sprintf("example-%d", time.Now().UnixNano()), // a fresh crawl
	}
	a, err := Open(ctx, rdb, o)
	if err != nil {
		log.Fatal(err)
	}
	b, err := Open(ctx, rdb, o)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := a.Add(ctx, frontier.Item{URL: "http://example.com/", Seed: true}); err != nil {
		log.Fatal(err)
	}
	seed, err := a.Next(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("a fetches", seed.URL)
	link := frontier.Item{URL: "http://example.com/about", Depth: 1, Source: seed.URL}
	if err := a.Finish(ctx, seed, "stored", []frontier.Item{link}); err != nil {
		log.Fatal(err)
	}
	it, err := b.Next(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("b fetches", it.URL, "depth", it.Depth)
	if err := b.Done(ctx, it, "stored"); err != nil {
		log.Fatal(err)
	}
	_, err = a.Next(ctx)
	fmt.Println("a:", errors.Is(err, frontier.ErrDrained))
	st, err := a.State(ctx, link.URL)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(link.URL, st)
	for _, w := range []*Frontier{a, b} {
		if err := w.Leave(ctx); err != nil {
			log.Fatal(err)
		}
	}
	// Output:
	// a fetches http://example.com/
	// b fetches http://example.com/about depth 1
	// a: true
	// http://example.com/about done:stored
}
