package redisfrontier

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/internal/redistest"
)

// sharedAddr is a redis-server that TestMain starts for the tests and the
// example that need no restarts; each test takes its own crawl name, so
// they do not see each other's keys. Tests that kill or restart a server
// start their own with redistest.Start.
var sharedAddr string

func TestMain(m *testing.M) { redistest.Main(m, "redisfrontier", &sharedAddr) }

var crawlSeq atomic.Int64

// newName returns a crawl name no other test uses.
func newName(t testing.TB) string {
	return fmt.Sprintf("t%d-%d", os.Getpid(), crawlSeq.Add(1))
}

// open opens a worker of crawl o.Name on rdb and makes it Leave when t
// ends.
func open(t testing.TB, rdb redis.UniversalClient, o Options) *Frontier {
	t.Helper()
	f, err := Open(context.Background(), rdb, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Leave(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return f
}

func fast(name string) Options {
	return Options{Options: frontier.Options{PerHostInFlight: 100, PerHostDelay: -1}, Name: name}
}

func u(host, path string) string { return "http://" + host + "/" + path }
