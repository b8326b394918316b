package frontier_test

import (
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/frontier/frontiertest"
)

// The bbolt Frontier passes the Queue contract.
func TestQueueContract(t *testing.T) {
	frontiertest.Run(t, func(t *testing.T, o frontier.Options) frontier.Queue {
		db, err := bolt.Open(filepath.Join(t.TempDir(), "crawl.db"), 0o600, &bolt.Options{Timeout: time.Second, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := db.Close(); err != nil {
				t.Error(err)
			}
		})
		f, err := frontier.New(db, o)
		if err != nil {
			t.Fatal(err)
		}
		return f
	})
}
