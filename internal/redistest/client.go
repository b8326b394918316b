package redistest

import (
	"testing"

	"github.com/redis/go-redis/v9"
)

// Client returns a client of the server at addr, closed when tb ends.
func Client(tb testing.TB, addr string) *redis.Client {
	tb.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	tb.Cleanup(func() {
		if err := rdb.Close(); err != nil {
			tb.Error(err)
		}
	})
	return rdb
}

// Client returns a cluster client of c, closed when tb ends.
func (c *Cluster) Client(tb testing.TB) *redis.ClusterClient {
	tb.Helper()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	tb.Cleanup(func() {
		if err := rdb.Close(); err != nil {
			tb.Error(err)
		}
	})
	return rdb
}
