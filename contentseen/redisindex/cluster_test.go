package redisindex

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/contentseen/contentseentest"
	"github.com/simcrawl/simcrawl/internal/redistest"
)

// The Redis index passes the Shared contract on a Redis Cluster of three
// masters, each of an index's n workers a ClusterClient of its own; and
// Open loaded the scripts into every master, so no call fell back from
// EVALSHA to sending a script's source with EVAL.
func TestClusterSharedContract(t *testing.T) {
	t.Parallel() // a cluster of its own; its start waits 2 s (a node turns ok no sooner)
	c := redistest.StartCluster(t)
	contentseentest.RunShared(t, func(t testing.TB, o contentseen.SharedOptions, n int) []contentseen.Shared {
		name := newName()
		cs := make([]contentseen.Shared, n)
		for i := range cs {
			cs[i] = open(t, c.Client(t), Options{Name: name, SharedOptions: o})
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

// masterOf returns the address of the master serving key's slot.
func masterOf(t testing.TB, rdb *redis.ClusterClient, key string) string {
	t.Helper()
	m, err := rdb.MasterForKey(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return m.Options().Addr
}

// Every key of one crawl's index (meta, seq, entries, pending, digests
// and every table) sits in the slot of its hash tag {NAME}, so on one
// master; two crawls whose tags hash to slots of different masters put
// their load on different masters.
func TestClusterOneSlotPerCrawl(t *testing.T) {
	t.Parallel() // a cluster of its own; its start waits 2 s (a node turns ok no sooner)
	c := redistest.StartCluster(t)
	rdb := c.Client(t)
	ctx := context.Background()
	// Crawl names in turn until one's tag is on another master than the
	// first's (a 2-in-3 chance each).
	names := []string{newName()}
	for names = append(names, newName()); masterOf(t, rdb, "{"+names[1]+"}") == masterOf(t, rdb, "{"+names[0]+"}"); {
		names[1] = newName()
	}
	var want []keys
	for i, name := range names {
		x := open(t, rdb, Options{Name: name})
		want = append(want, x.keys)
		for j := range 3 {
			e := contentseentest.Entry(fmt.Sprintf("w%d/%d", i, j), contentseen.Fingerprint(0x0123456789abcdef)<<(8*j), uint64(j))
			_, tok, err := x.Lookup(ctx, e.Fingerprint, e.Digest)
			if err != nil {
				t.Fatal(err)
			}
			cl, err := x.Claim(ctx, e, tok)
			if err != nil || cl.Seq == 0 {
				t.Fatalf("Claim = %+v, %v", cl, err)
			}
			if j < 2 { // the third stays pending
				if err := x.Confirm(ctx, cl.Seq, e.ID); err != nil {
					t.Fatal(err)
				}
			}
		}
		e := contentseentest.Entry(fmt.Sprintf("w%d/lc", i), 0x7777777777777777, 9)
		lc, err := x.LookupClaim(ctx, e, x.K())
		if err != nil || lc.Seq == 0 {
			t.Fatalf("LookupClaim = %+v, %v", lc, err)
		}
		if err := x.Confirm(ctx, lc.Seq, e.ID); err != nil {
			t.Fatal(err)
		}
	}
	found := map[string]string{} // key -> master address
	var mu sync.Mutex
	err := rdb.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		ks, err := m.Keys(ctx, "simcrawl:*").Result()
		mu.Lock()
		defer mu.Unlock()
		for _, k := range ks {
			found[k] = m.Options().Addr
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(want[0].all) + len(want[1].all); len(found) != n {
		t.Errorf("%d keys on the masters, want %d (two crawls): %v", len(found), n, found)
	}
	for i, name := range names {
		tag := "{" + name + "}"
		slot, err := rdb.ClusterKeySlot(ctx, tag).Result()
		if err != nil {
			t.Fatal(err)
		}
		home := masterOf(t, rdb, tag)
		for _, k := range want[i].all {
			if found[k] != home {
				t.Errorf("key %s on master %q, want %s (slot %d)", k, found[k], home, slot)
			}
			if s, err := rdb.ClusterKeySlot(ctx, k).Result(); err != nil || s != slot {
				t.Errorf("CLUSTER KEYSLOT %s = %d, %v; want %d", k, s, err, slot)
			}
		}
		t.Logf("crawl %s: %d keys in slot %d on master %s", name, len(want[i].all), slot, home)
	}
	// Each call was one EVALSHA on its crawl's master, never redirected
	// (MOVED counts as rejected): per crawl the meta and heal scripts of
	// Open, 3 Lookups, 3 Claims and 2 Confirms, so a new page's judge step
	// is 3 round trips, as on one server, and a LookupClaim and its
	// Confirm (2 round trips through LookupClaim).
	for _, s := range c.Nodes {
		var want int
		for _, name := range names {
			if masterOf(t, rdb, "{"+name+"}") == s.Addr() {
				want += 12
			}
		}
		calls, rejected := evalshaCalls(t, s.Addr())
		if calls != want || rejected != 0 {
			t.Errorf("master %s: %d EVALSHA calls, %d rejected; want %d, 0", s.Addr(), calls, rejected, want)
		}
	}
}

// evalshaCalls returns the EVALSHA calls the server at addr ran and
// rejected (INFO commandstats).
func evalshaCalls(t testing.TB, addr string) (calls, rejected int) {
	t.Helper()
	stats, err := redistest.Command(addr, "INFO", "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(stats, "cmdstat_evalsha:")
	if i < 0 {
		return 0, 0
	}
	line, _, _ := strings.Cut(stats[i+len("cmdstat_evalsha:"):], "\r\n")
	for _, kv := range strings.Split(line, ",") {
		k, v, _ := strings.Cut(kv, "=")
		n, err := strconv.Atoi(v)
		switch k {
		case "calls":
			calls = n
		case "rejected_calls":
			rejected = n
		default:
			continue
		}
		if err != nil {
			t.Fatalf("INFO commandstats at %s: %q", addr, line)
		}
	}
	return calls, rejected
}

// Open through a ClusterClient whose seed nodes do not answer fails,
// naming them.
func TestClusterOpenUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{addr}, MaxRetries: -1, DialTimeout: time.Second})
	t.Cleanup(func() {
		if err := rdb.Close(); err != nil {
			t.Error(err)
		}
	})
	_, err = Open(context.Background(), rdb, Options{Name: "c", SharedOptions: contentseen.SharedOptions{K: 3}})
	if err == nil || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "connect") {
		t.Fatalf("Open on a closed port = %v, want an error naming %s", err, addr)
	}
}
