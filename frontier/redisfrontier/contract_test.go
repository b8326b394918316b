package redisfrontier

import (
	"testing"

	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/frontier/frontiertest"
	"github.com/simcrawl/simcrawl/internal/redistest"
)

// The Redis frontier passes the Queue contract, each queue a fresh crawl
// on the shared test server.
func TestQueueContract(t *testing.T) {
	rdb := redistest.Client(t, sharedAddr)
	frontiertest.Run(t, func(t *testing.T, o frontier.Options) frontier.Queue {
		return open(t, rdb, Options{Options: o, Name: newName(t)})
	})
}
