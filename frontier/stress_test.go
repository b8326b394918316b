package frontier

import (
	"context"
	"errors"
	"fmt"
	fnvpkg "hash/fnv"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// children is a fake web: page (level, k) links to three pages one level
// down. The reachable set does not depend on the crawl order.
func children(it Item) []Item {
	var level, k int
	if _, err := fmt.Sscanf(it.URL[len("http://h00.example/"):], "L%d-%d", &level, &k); err != nil || level >= 3 {
		return nil
	}
	var out []Item
	for i := range 3 {
		k2 := (k*3 + i) % 200
		out = append(out, Item{URL: fakeURL(level+1, k2), Depth: it.Depth + 1, Source: it.URL})
	}
	return out
}

// flaky URLs fail once and are retried; broken ones fail for good.
func flaky(url string) bool  { return fnv(url)%4 == 0 }
func broken(url string) bool { return fnv(url)%7 == 1 }

func fnv(s string) uint32 {
	h := fnvpkg.New32a()
	h.Write([]byte(s)) // hash.Hash.Write never fails
	return h.Sum32()
}

func fakeURL(level, k int) string { return fmt.Sprintf("http://h%02d.example/L%d-%d", k%25, level, k) }

func TestConcurrentCrawl(t *testing.T) {
	t.Run("limit=2/delay=0", func(t *testing.T) { testConcurrentCrawl(t, 2, -1) })
	// A real delay makes Next sleep on its timer as well as on signals.
	t.Run("limit=1/delay=1ms", func(t *testing.T) { testConcurrentCrawl(t, 1, time.Millisecond) })
}

func testConcurrentCrawl(t *testing.T, limit int, delay time.Duration) {
	f, db, _ := newFrontier(t, Options{PerHostInFlight: limit, PerHostDelay: delay})
	var seeds []Item
	for k := range 10 {
		seeds = append(seeds, Item{URL: fakeURL(0, k), Seed: true})
	}
	mustAdd(t, f, seeds...)

	var mu sync.Mutex
	handed := map[string]int{} // URL -> times handed out
	final := map[string]bool{} // URL -> completed (done or failed)
	perHost := map[string]int{}
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			for {
				it, err := f.Next(context.Background())
				if errors.Is(err, ErrDrained) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				h := HostKey(it.URL)
				mu.Lock()
				handed[it.URL]++
				if final[it.URL] {
					t.Errorf("%s handed out after it was completed", it.URL)
				}
				if perHost[h]++; perHost[h] > limit {
					t.Errorf("%d requests in flight to %s, limit %d", perHost[h], h, limit)
				}
				n := handed[it.URL]
				mu.Unlock()
				runtime.Gosched()

				mu.Lock()
				perHost[h]-- // before the commit: our count never exceeds the truth
				retry := flaky(it.URL) && n == 1
				fail := broken(it.URL)
				if !retry {
					final[it.URL] = true
				}
				mu.Unlock()
				switch {
				case retry:
					err = f.Retry(context.Background(), it, 0, "flaky")
				case fail:
					err = f.Fail(context.Background(), it, "broken")
				default:
					err = db.Update(func(tx *bolt.Tx) error {
						if _, err := f.AddTx(tx, children(it)...); err != nil {
							return err
						}
						return f.DoneTx(tx, it, "stored")
					})
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()

	// Oracle: the reachable set by a plain BFS, failures cutting links.
	want := map[string]bool{}
	queue := append([]Item(nil), seeds...)
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		if want[it.URL] {
			continue
		}
		want[it.URL] = true
		if !broken(it.URL) {
			queue = append(queue, children(it)...)
		}
	}
	if len(handed) != len(want) {
		t.Errorf("crawled %d URLs, the fake web has %d reachable", len(handed), len(want))
	}
	for url, n := range handed {
		maxN := 1
		if flaky(url) {
			maxN = 2
		}
		if n != maxN {
			t.Errorf("%s handed out %d times, want %d", url, n, maxN)
		}
	}
	s := f.Stats()
	if s.Pending != 0 || s.InFlight != 0 || s.Done+s.Failed != len(want) {
		t.Errorf("Stats = %+v, want %d completed", s, len(want))
	}
	t.Logf("%d URLs, %+v", len(want), s)
}

// TestBoundedMemory checks that pending URLs live in the database, not in
// the Go heap: adding many more URLs to the same hosts, and reopening a
// frontier on them, grows the live heap by at most 16 bytes per URL. A
// URL kept in memory costs at least its string (about 60 bytes here; a
// frontier that kept the URLs it was given grew 84 bytes a URL, five times
// the allowance); the frontier grows about 1 byte a URL (bbolt's free
// page list). SIMCRAWL_BIG=1 runs the doc's 100,000 URLs on 1,000 hosts.
func TestBoundedMemory(t *testing.T) {
	hosts, first, more := 100, 10, 150
	if os.Getenv("SIMCRAWL_BIG") == "1" {
		hosts, first, more = 1000, 10, 90
	}
	const perURL = 16 // bytes of heap growth allowed per pending URL
	f, db, path := newFrontier(t, Options{})
	// One Add per host, like the links of one page: mostly one host each.
	add := func(from, to int) {
		batch := make([]Item, 0, to-from)
		for h := range hosts {
			batch = batch[:0]
			for i := from; i < to; i++ {
				batch = append(batch, Item{
					URL:    fmt.Sprintf("http://host%04d.example/section/page-%06d.html?ref=home", h, i),
					Depth:  i % 5,
					Source: fmt.Sprintf("http://host%04d.example/", h),
				})
			}
			mustAdd(t, f, batch...)
		}
	}
	heap := func() int64 {
		runtime.GC()
		runtime.GC() // and bbolt's pooled page buffers, kept through one GC
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	add(0, first)
	h1 := heap()
	add(first, first+more)
	h2 := heap()
	n := hosts * (first + more)
	if s := f.Stats(); s.Pending != n || s.Hosts != hosts {
		t.Fatalf("Stats = %+v, want %d pending on %d hosts", s, n, hosts)
	}
	t.Logf("%d then %d pending URLs on %d hosts: live Go heap %.2f then %.2f MB", hosts*first, n, hosts, float64(h1)/(1<<20), float64(h2)/(1<<20))
	if grew, allowed := h2-h1, int64(perURL*hosts*more); grew > allowed {
		t.Errorf("heap grew %d bytes for %d more pending URLs, want at most %d (%d a URL)", grew, hosts*more, allowed, perURL)
	}
	runtime.KeepAlive(f)

	// Reopen: New reads one key per host, not the queues.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	h3 := heap()
	db2 := openDB(t, path)
	defer db2.Close()
	f2, err := New(db2, Options{PerHostDelay: -1})
	if err != nil {
		t.Fatal(err)
	}
	h4 := heap()
	t.Logf("reopened: live Go heap %.2f MB, %.2f before", float64(h4)/(1<<20), float64(h3)/(1<<20))
	if grew, allowed := h4-h3, int64(perURL*n); grew > allowed {
		t.Errorf("reopening %d pending URLs on %d hosts grew the heap %d bytes, want at most %d (%d a URL)", n, hosts, grew, allowed, perURL)
	}
	if s := f2.Stats(); s.Pending != n || s.Hosts != hosts {
		t.Errorf("Stats after reopen = %+v", s)
	}
	// Breadth-first across hosts: the first hand-outs, one per host and
	// more, are depth 0.
	for range 2 * hosts {
		if it := mustNext(t, f2); it.Depth != 0 {
			t.Fatalf("Next = %+v, want depth 0 first", it)
		}
	}
	runtime.KeepAlive(f2)
}
