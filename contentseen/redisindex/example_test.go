package redisindex

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/contentseen"
)

// Two workers of one crawl judge two copies of a page: the first claims
// it, stores it and confirms; the second finds it and drops its copy.
func Example() {
	ctx := context.Background()
	addr := sharedAddr // a redis-server's host:port (the tests start one)
	o := Options{
		Name:          fmt.Sprintf("example-%d", time.Now().UnixNano()), // a fresh crawl
		SharedOptions: contentseen.SharedOptions{K: 3},
	}
	var workers []*Index
	for range 2 {
		rdb := redis.NewClient(&redis.Options{Addr: addr}) // one client per worker process
		defer rdb.Close()
		x, err := Open(ctx, rdb, o)
		if err != nil {
			log.Fatal(err)
		}
		defer x.Close()
		workers = append(workers, x)
	}
	page := contentseen.Entry{ID: "worker-a/1", URL: "https://a.example/story", Fingerprint: 0x0123456789abcdef}
	page.Digest[0] = 1
	copyOf := contentseen.Entry{ID: "worker-b/7", URL: "https://b.example/mirror", Fingerprint: page.Fingerprint ^ 0b11}
	same := func(c contentseen.Entry) bool { return true } // the sketches would verify it

	v, err := contentseen.Judge(ctx, workers[0], page, same)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("a claims seq", v.Seq)
	// ... worker a stores the page in its data directory, then:
	if err := workers[0].Confirm(ctx, v.Seq, page.ID); err != nil {
		log.Fatal(err)
	}
	v, err = contentseen.Judge(ctx, workers[1], copyOf, same)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("b drops its page as a copy of %s (%s, %d bits away)\n", v.Copy.ID, v.Copy.URL, contentseen.Distance(copyOf.Fingerprint, v.Copy.Fingerprint))
	// Output:
	// a claims seq 1
	// b drops its page as a copy of worker-a/1 (https://a.example/story, 2 bits away)
}
