package redisindex

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/contentseen/contentseentest"
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

// The Redis index passes the Shared contract on a Redis Cluster of three
// masters, each of an index's n workers a ClusterClient of its own; and
// Open loaded the scripts into every master, so no call fell back from
// EVALSHA to sending a script's source with EVAL.
func TestClusterSharedContract(t *testing.T) {
	c := redistest.StartCluster(t)
	contentseentest.RunShared(t, func(t testing.TB, o contentseen.SharedOptions, n int) []contentseen.Shared {
		name := newName()
		cs := make([]contentseen.Shared, n)
		for i := range cs {
			cs[i] = open(t, clusterClient(t, c), Options{Name: name, SharedOptions: o})
		}
		return cs
	})
	for _, s := range c.Nodes {
		stats, err := redistest.Command(s.Addr(), "INFO", "commandstats")
		if err != nil {
			t.Fatal(err)
		}
		if i := strings.Index(stats, "cmdstat_eval:"); i >= 0 {
			line, _, _ := strings.Cut(stats[i:], "\r\n")
			t.Errorf("master %s ran EVAL (%s): a script was not loaded there", s.Addr(), line)
		}
	}
}
