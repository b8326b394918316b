package redisconn_test

import (
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/internal/redisconn"
)

// Messages name the server a client talks to.
func ExampleAddr() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6390"})
	defer rdb.Close()
	fmt.Println(redisconn.Addr(rdb))
	// Output: 127.0.0.1:6390
}
