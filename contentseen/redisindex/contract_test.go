package redisindex

import (
	"testing"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/contentseen/contentseentest"
	"github.com/simcrawl/simcrawl/internal/redistest"
)

// The Redis index passes the Shared contract, each index a fresh crawl on
// the shared test server, each of its n clients a worker with its own
// connection pool.
func TestSharedContract(t *testing.T) {
	contentseentest.RunShared(t, func(t testing.TB, o contentseen.SharedOptions, n int) []contentseen.Shared {
		name := newName()
		cs := make([]contentseen.Shared, n)
		for i := range cs {
			cs[i] = open(t, redistest.Client(t, sharedAddr), Options{Name: name, SharedOptions: o})
		}
		return cs
	})
}
