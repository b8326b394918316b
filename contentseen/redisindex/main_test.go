package redisindex

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/internal/redistest"
)

// sharedAddr is a redis-server that TestMain starts for the tests, the
// example and the benchmarks that need no restarts; each test takes its
// own crawl name, so they do not see each other's keys. Tests that kill or
// restart a server start their own with redistest.Start.
var sharedAddr string

func TestMain(m *testing.M) { redistest.Main(m, "redisindex", &sharedAddr) }

var crawlSeq atomic.Int64

// newName returns a crawl name no other test uses.
func newName() string {
	return fmt.Sprintf("t%d-%d", os.Getpid(), crawlSeq.Add(1))
}

// open opens crawl o.Name's index on rdb and closes it when t ends.
func open(t testing.TB, rdb redis.UniversalClient, o Options) *Index {
	t.Helper()
	x, err := Open(context.Background(), rdb, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := x.Close(); err != nil && !errors.Is(err, contentseen.ErrClosed) {
			t.Error(err)
		}
	})
	return x
}
