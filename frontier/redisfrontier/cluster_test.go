package redisfrontier

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/frontier/frontiertest"
	"github.com/simcrawl/simcrawl/internal/redistest"
)

// clusterClient returns a client of cluster c closed when t ends.
func clusterClient(t testing.TB, c *redistest.Cluster) *redis.ClusterClient {
	t.Helper()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	t.Cleanup(func() {
		if err := rdb.Close(); err != nil {
			t.Error(err)
		}
	})
	return rdb
}

// The Redis frontier passes the Queue contract on a Redis Cluster of
// three masters, through a ClusterClient, each queue a fresh crawl.
func TestClusterQueueContract(t *testing.T) {
	rdb := clusterClient(t, redistest.StartCluster(t))
	frontiertest.Run(t, func(t *testing.T, o frontier.Options) frontier.Queue {
		return open(t, rdb, Options{Options: o, Name: newName(t)})
	})
}
