package redisfrontier

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/internal/redisconn"
)

// BenchmarkQueue queues 1M URLs of a crawl's shape (many hosts of skewed
// sizes, URLs of 60 to 110 bytes, each with the linking page as source)
// through Add, then times Next and Finish (no links) of one worker, and
// after the rest is taken and finished, measures what the URL-seen hash
// keeps. It reports Redis memory per queued URL (B/queued, INFO
// used_memory after the adds minus before, divided by n) and per finished
// URL (B/seen, the same once every URL is done and the call-id keys have
// expired), Next and Finish p50 and p99, and round trips per Next+Finish.
//
//	go test -run '^$' -bench Queue -benchtime 20000x ./frontier/redisfrontier/
func BenchmarkQueue(b *testing.B) {
	const n, hosts = 1_000_000, 50_000
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: sharedAddr})
	defer rdb.Close()
	// A short lease, so that the call-id keys of Next (kept two leases for
	// its retries) are gone when the seen URLs are measured.
	o := Options{Options: frontier.Options{PerHostInFlight: 2, PerHostDelay: -1}, Name: newName(b), LeaseTTL: 2 * time.Second}
	f, err := Open(ctx, rdb, o)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := f.Leave(ctx); err != nil {
			b.Error(err)
		}
	}()
	before := usedMemory(b, rdb)

	r := rand.New(rand.NewPCG(1, 2))
	urls, urlBytes := queueURLs(b, f, r, n, hosts)
	queued := usedMemory(b, rdb)
	b.Logf("queued %d URLs of %d hosts, %.1f bytes on average: %.0f B/queued URL of redis memory; url hash %.0f B/URL",
		n, hosts, float64(urlBytes)/float64(n), float64(queued-before)/n, memoryUsage(b, rdb, f.prefix+"url")/n)

	h := &redisconn.RoundTrips{}
	rdb.AddHook(h)
	next := make(latencies, 0, 1<<16)
	finish := make(latencies, 0, 1<<16)
	rt0 := h.N()
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		it, err := f.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := f.Finish(ctx, it, "stored", nil); err != nil {
			b.Fatal(err)
		}
		next = append(next, t1.Sub(t0))
		finish = append(finish, time.Since(t1))
	}
	b.StopTimer()
	b.ReportMetric(float64(h.N()-rt0)/float64(len(next)), "rt/op")
	next.report(b, "next")
	finish.report(b, "finish")
	b.ReportMetric(float64(queued-before)/n, "B/queued")

	// The rest, untimed, then the URL-seen hash alone.
	for {
		it, err := f.Next(ctx)
		if errors.Is(err, frontier.ErrDrained) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		if err := f.Finish(ctx, it, "stored", nil); err != nil {
			b.Fatal(err)
		}
	}
	if s, err := f.Counts(ctx); err != nil || s.Done != n {
		b.Fatalf("after the drain %+v, %v; want %d done", s, err, n)
	}
	for _, u := range urls {
		if st, err := f.State(ctx, u); err != nil || st != "done:stored" {
			b.Fatalf("%s after the drain: %q, %v", u, st, err)
		}
	}
	time.Sleep(2*o.LeaseTTL + time.Second)
	expireOnce(b, rdb, f.prefix+"once:*")
	seen := usedMemory(b, rdb)
	b.ReportMetric(float64(seen-before)/n, "B/seen")
	b.Logf("%d URLs done: %.0f B/seen URL of redis memory; url hash %.0f B/URL",
		n, float64(seen-before)/n, memoryUsage(b, rdb, f.prefix+"url")/n)
}

// queueURLs adds n URLs of the given number of hosts (Zipf sizes: a few
// big sites, a long tail) in calls of 500, as pages' links would come,
// and returns a sample of them and their total length.
func queueURLs(b *testing.B, f *Frontier, r *rand.Rand, n, hosts int) (sample []string, bytes int) {
	b.Helper()
	ctx := context.Background()
	words := strings.Fields("news world local sport business city weather review opinion market " +
		"science health travel food music film books culture politics tech election economy school")
	tlds := []string{"com", "org", "net", "de", "co.uk", "fr", "info"}
	zipf := rand.NewZipf(r, 1.1, 2, uint64(hosts-1))
	perHost := make([]int, hosts)
	batch := make([]frontier.Item, 0, 500)
	for i := range n {
		hi := int(zipf.Uint64())
		perHost[hi]++
		host := fmt.Sprintf("www.%s%d.%s", words[hi%len(words)], hi, tlds[hi%len(tlds)])
		slug := words[r.IntN(len(words))]
		for range 1 + r.IntN(5) {
			slug += "-" + words[r.IntN(len(words))]
		}
		url := fmt.Sprintf("https://%s/%s/2026/11/%02d/%s-%d.html", host, words[r.IntN(len(words))], 1+r.IntN(28), slug, perHost[hi])
		src := fmt.Sprintf("https://%s/%s/", host, words[r.IntN(len(words))])
		bytes += len(url)
		if i%(n/1000) == 0 {
			sample = append(sample, url)
		}
		batch = append(batch, frontier.Item{URL: url, Depth: 1 + r.IntN(3), Source: src})
		if len(batch) == cap(batch) || i == n-1 {
			added, err := f.Add(ctx, batch...)
			if err != nil {
				b.Fatal(err)
			}
			if added != len(batch) {
				b.Fatalf("added %d of %d new URLs", added, len(batch))
			}
			batch = batch[:0]
		}
	}
	return sample, bytes
}

// expireOnce deletes the expired keys matching pattern now rather than
// when Redis's expiry cycle reaches them: SCAN drops the expired keys it
// meets.
func expireOnce(b *testing.B, rdb *redis.Client, pattern string) {
	b.Helper()
	ctx := context.Background()
	var cursor uint64
	for {
		keys, next, err := rdb.Scan(ctx, cursor, pattern, 10_000).Result()
		if err != nil {
			b.Fatal(err)
		}
		if len(keys) > 0 {
			b.Logf("%d keys %s still alive", len(keys), pattern)
		}
		if cursor = next; cursor == 0 {
			return
		}
	}
}

func memoryUsage(b *testing.B, rdb *redis.Client, key string) float64 {
	b.Helper()
	m, err := rdb.MemoryUsage(context.Background(), key, 0).Result()
	if err != nil {
		b.Fatal(err)
	}
	return float64(m)
}

func usedMemory(b *testing.B, rdb *redis.Client) int64 {
	b.Helper()
	n, err := redisconn.UsedMemory(context.Background(), rdb)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// latencies collects per-operation times and reports p50 and p99.
type latencies []time.Duration

func (l latencies) report(b *testing.B, op string) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	b.ReportMetric(float64(l[len(l)/2].Microseconds()), op+"-p50-µs")
	b.ReportMetric(float64(l[len(l)*99/100].Microseconds()), op+"-p99-µs")
}
