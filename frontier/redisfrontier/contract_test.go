package redisfrontier

import (
	"testing"

	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/frontier/frontiertest"
)

// The Redis frontier passes the Queue contract, each queue a fresh crawl
// on the shared test server.
func TestQueueContract(t *testing.T) {
	rdb := client(t, sharedAddr)
	frontiertest.Run(t, func(t *testing.T, o frontier.Options) frontier.Queue {
		return open(t, rdb, Options{Options: o, Name: newName(t)})
	})
}
