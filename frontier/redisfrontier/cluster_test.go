package redisfrontier

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/frontier/frontiertest"
	"github.com/simcrawl/simcrawl/internal/redistest"
)

// The Redis frontier passes the Queue contract on a Redis Cluster of
// three masters, through a ClusterClient, each queue a fresh crawl; and
// Open loaded the scripts into every master, so no call fell back from
// EVALSHA to sending a script's source with EVAL.
func TestClusterQueueContract(t *testing.T) {
	t.Parallel() // a cluster of its own; its start waits 2 s (a node turns ok no sooner)
	c := redistest.StartCluster(t)
	rdb := c.Client(t)
	frontiertest.Run(t, func(t *testing.T, o frontier.Options) frontier.Queue {
		return open(t, rdb, Options{Options: o, Name: newName(t)})
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

// masterOf returns the address of the master serving key's slot.
func masterOf(t testing.TB, rdb *redis.ClusterClient, key string) string {
	t.Helper()
	m, err := rdb.MasterForKey(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return m.Options().Addr
}

// keysByMaster returns the keys matching pattern on each master, by its
// address.
func keysByMaster(t testing.TB, rdb *redis.ClusterClient, pattern string) map[string][]string {
	t.Helper()
	var mu sync.Mutex
	keys := map[string][]string{}
	err := rdb.ForEachMaster(context.Background(), func(ctx context.Context, m *redis.Client) error {
		ks, err := m.Keys(ctx, pattern).Result()
		mu.Lock()
		keys[m.Options().Addr] = ks
		mu.Unlock()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// Every key of one crawl's frontier, per-host queues included, sits in the
// slot of its hash tag {NAME}, so on one master; two crawls whose tags
// hash to slots of different masters put their load on different masters.
func TestClusterOneSlotPerCrawl(t *testing.T) {
	t.Parallel() // a cluster of its own; its start waits 2 s (a node turns ok no sooner)
	c := redistest.StartCluster(t)
	rdb := c.Client(t)
	ctx := context.Background()
	// Crawl names in turn until one's tag is on another master than the
	// first's (a 2-in-3 chance each).
	names := []string{newName(t)}
	for names = append(names, newName(t)); masterOf(t, rdb, "{"+names[1]+"}") == masterOf(t, rdb, "{"+names[0]+"}"); {
		names[1] = newName(t)
	}
	for _, name := range names {
		f := open(t, rdb, fast(name))
		if _, err := f.Add(ctx, frontier.Item{URL: u("a.example", ""), Seed: true}, frontier.Item{URL: u("b.example", ""), Seed: true}); err != nil {
			t.Fatal(err)
		}
		it := frontiertest.MustNext(t, f)
		links := []frontier.Item{{URL: u("c.example", "1"), Depth: 1, Source: it.URL}, {URL: u("a.example", "2"), Depth: 1, Source: it.URL}}
		if err := f.Finish(ctx, it, "stored", links); err != nil {
			t.Fatal(err)
		}
		if ok, err := f.ClaimPage(ctx, 10); err != nil || !ok {
			t.Fatalf("ClaimPage = %v, %v", ok, err)
		}
	}
	keys := keysByMaster(t, rdb, "simcrawl:*")
	for _, name := range names {
		tag := "{" + name + "}"
		slot, err := rdb.ClusterKeySlot(ctx, tag).Result()
		if err != nil {
			t.Fatal(err)
		}
		home := masterOf(t, rdb, tag)
		var queues int
		for addr, ks := range keys {
			for _, k := range ks {
				if !strings.Contains(k, tag) {
					continue
				}
				if addr != home {
					t.Errorf("key %s on master %s, want %s (slot %d)", k, addr, home, slot)
				}
				if s, err := rdb.ClusterKeySlot(ctx, k).Result(); err != nil || s != slot {
					t.Errorf("CLUSTER KEYSLOT %s = %d, %v; want %d", k, s, err, slot)
				}
				if strings.Contains(k, ":fr:q:") {
					queues++
				}
			}
		}
		if queues < 2 {
			t.Errorf("crawl %s: %d host queue keys found, want at least 2 (a.example, b.example or c.example)", name, queues)
		}
		t.Logf("crawl %s: slot %d on master %s", name, slot, home)
	}
	if len(keys[masterOf(t, rdb, "{"+names[0]+"}")]) == 0 || len(keys[masterOf(t, rdb, "{"+names[1]+"}")]) == 0 {
		t.Errorf("keys by master %v: want both crawls' masters to hold keys", keys)
	}
}
