package redisindex

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/internal/redisconn"
)

// The benchmarks run against the test server (memory only, on this
// machine: a round trip is a loopback one). Sizes: 1M fingerprints, and 10M
// with SIMCRAWL_BIG=1. Each reports the server's memory per loaded
// fingerprint (B/fp, INFO used_memory before and after the load, divided
// by n) and Redis round trips per operation (rt/op, counted by a client
// hook: a pipeline or a script is one).
//
//	go test -run '^$' -bench . -benchtime 20000x ./contentseen/redisindex/

func benchSizes() []int {
	if os.Getenv("SIMCRAWL_BIG") != "" {
		return []int{1_000_000, 10_000_000}
	}
	return []int{1_000_000}
}

// loadedIndex is an index of n random committed entries at radius k,
// loaded once per process with BulkLoad and shared by the benchmarks.
type loadedIndex struct {
	name     string
	fps      []contentseen.Fingerprint // a sample of the loaded ones, for copies
	bytesPer float64
}

var (
	loadedMu sync.Mutex
	loaded   = map[[2]int]*loadedIndex{}
)

func benchEntry(r *rand.Rand, i int) contentseen.Entry {
	e := contentseen.Entry{
		ID:          fmt.Sprintf("worker-%d/%d", i%8, i),
		URL:         fmt.Sprintf("https://host%d.example.com/news/2026/11/article-%d.html", i%5000, i),
		Fingerprint: contentseen.Fingerprint(r.Uint64()),
	}
	for j := range e.Digest {
		e.Digest[j] = byte(r.Uint32())
	}
	e.Sketch.Size = r.Uint32N(3000) + 50
	for j := range e.Sketch.Bins {
		e.Sketch.Bins[j] = byte(r.Uint32())
	}
	return e
}

func usedMemory(b *testing.B, rdb *redis.Client) int64 {
	b.Helper()
	n, err := redisconn.UsedMemory(context.Background(), rdb)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// serverCPU is the server's CPU time so far (INFO cpu, user and system,
// all threads), in seconds: what a load costs Redis whatever the
// machine's load.
func serverCPU(b *testing.B, rdb *redis.Client) float64 {
	b.Helper()
	s, err := rdb.Info(context.Background(), "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var sum float64
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		for _, p := range []string{"used_cpu_user:", "used_cpu_sys:"} {
			if v, ok := strings.CutPrefix(line, p); ok {
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					b.Fatal(err)
				}
				sum += f
			}
		}
	}
	return sum
}

func loadIndex(b *testing.B, n, k int) *loadedIndex {
	b.Helper()
	loadedMu.Lock()
	defer loadedMu.Unlock()
	if li := loaded[[2]int{n, k}]; li != nil {
		return li
	}
	ctx := context.Background()
	// MEMORY USAGE of a hash of 10M fields takes seconds, past the default
	// read timeout on a loaded machine.
	rdb := redis.NewClient(&redis.Options{Addr: sharedAddr, ReadTimeout: time.Minute})
	defer rdb.Close()
	li := &loadedIndex{name: newName()}
	x, err := Open(ctx, rdb, Options{Name: li.name, SharedOptions: contentseen.SharedOptions{K: k}})
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	before, cpu := usedMemory(b, rdb), serverCPU(b, rdb)
	r := rand.New(rand.NewPCG(uint64(n), uint64(k)))
	start := time.Now()
	const chunk = 500_000 // BulkLoad rewrites each bucket once per call
	es := make([]contentseen.Entry, 0, chunk)
	for i := range n {
		e := benchEntry(r, i)
		if i%(n/1000) == 0 {
			li.fps = append(li.fps, e.Fingerprint)
		}
		es = append(es, e)
		if len(es) == chunk || i == n-1 {
			if err := x.BulkLoad(ctx, es); err != nil {
				b.Fatal(err)
			}
			es = es[:0]
		}
	}
	took, cpu := time.Since(start), serverCPU(b, rdb)-cpu
	li.bytesPer = float64(usedMemory(b, rdb)-before) / float64(n)
	b.Logf("loaded %d entries at k=%d in %v (%.0f entries/s, %.1f µs of redis cpu each): %.0f B/fp of redis memory",
		n, k, took.Round(time.Millisecond), float64(n)/took.Seconds(), cpu*1e6/float64(n), li.bytesPer)
	for _, key := range x.keys.all[2:] { // where the bytes are: MEMORY USAGE, every field counted
		m, err := rdb.MemoryUsage(ctx, key, 0).Result()
		if errors.Is(err, redis.Nil) {
			continue // no pending entries
		}
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("%s: %.1f B/fp", key, float64(m)/float64(n))
	}
	loaded[[2]int{n, k}] = li
	return li
}

// openBench opens the loaded index on a client with a round-trip hook.
func openBench(b *testing.B, li *loadedIndex, k int) (*Index, *redisconn.RoundTrips) {
	b.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: sharedAddr})
	b.Cleanup(func() {
		if err := rdb.Close(); err != nil {
			b.Error(err)
		}
	})
	x, err := Open(context.Background(), rdb, Options{Name: li.name, SharedOptions: contentseen.SharedOptions{K: k}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := x.Close(); err != nil {
			b.Error(err)
		}
	})
	h := &redisconn.RoundTrips{}
	rdb.AddHook(h)
	return x, h
}

// latencies collects per-operation times and reports p50 and p99.
type latencies []time.Duration

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	b.ReportMetric(float64(l[len(l)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(l[len(l)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkLookup is one Lookup of a new fingerprint (nothing within K:
// one round trip) or of a copy of a loaded one (the candidates' entries
// read: two).
func BenchmarkLookup(b *testing.B) {
	for _, n := range benchSizes() {
		for _, k := range []int{3, 7} {
			if k == 3 && n > 1_000_000 {
				continue // one index of 10M (k=7) is enough memory for a shared machine
			}
			for _, kind := range []string{"new", "copy"} {
				b.Run(fmt.Sprintf("n=%.0e/k=%d/%s", float64(n), k, kind), func(b *testing.B) {
					li := loadIndex(b, n, k)
					x, h := openBench(b, li, k)
					r := rand.New(rand.NewPCG(1, 2))
					ctx := context.Background()
					lat := make(latencies, 0, 1<<16)
					b.ReportAllocs()
					rt0 := h.N() // Open's calls are not the loop's
					b.ResetTimer()
					for b.Loop() {
						fp := contentseen.Fingerprint(r.Uint64())
						if kind == "copy" {
							fp = flip(r, li.fps[r.IntN(len(li.fps))], r.IntN(k+1))
						}
						t0 := time.Now()
						if _, _, err := x.Lookup(ctx, fp, [16]byte{}); err != nil {
							b.Fatal(err)
						}
						lat = append(lat, time.Since(t0))
					}
					b.StopTimer()
					b.ReportMetric(float64(h.N()-rt0)/float64(len(lat)), "rt/op")
					b.ReportMetric(li.bytesPer, "B/fp")
					lat.report(b)
				})
			}
		}
	}
}

// BenchmarkJudge is the whole check-and-insert of a new page through
// Redis: Lookup, Claim, Confirm (three round trips).
func BenchmarkJudge(b *testing.B) {
	for _, n := range benchSizes() {
		k := 7
		b.Run(fmt.Sprintf("n=%.0e/k=%d", float64(n), k), func(b *testing.B) {
			li := loadIndex(b, n, k)
			x, h := openBench(b, li, k)
			r := rand.New(rand.NewPCG(3, uint64(time.Now().UnixNano())))
			ctx := context.Background()
			lat := make(latencies, 0, 1<<16)
			b.ReportAllocs()
			rt0 := h.N() // Open's calls are not the loop's
			i := 0
			b.ResetTimer()
			for b.Loop() {
				i++
				e := benchEntry(r, n+i)
				t0 := time.Now()
				v, err := contentseen.Judge(ctx, x, e, func(contentseen.Entry) bool { return false })
				if err != nil {
					b.Fatal(err)
				}
				if v.Seq == 0 {
					b.Fatalf("new page not claimed: %+v", v)
				}
				if err := x.Confirm(ctx, v.Seq, e.ID); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			b.ReportMetric(float64(h.N()-rt0)/float64(len(lat)), "rt/op")
			b.ReportMetric(li.bytesPer, "B/fp")
			lat.report(b)
		})
	}
}

// BenchmarkLoad loads n random entries into a new index with Load (one
// script per 256 entries, each insert rewriting its buckets) and with
// BulkLoad (each bucket written once per call), and reports entries/s and
// Redis's CPU per entry. Run with -count to alternate the two.
func BenchmarkLoad(b *testing.B) {
	const n = 200_000
	for _, how := range []string{"Load", "BulkLoad"} {
		b.Run(how, func(b *testing.B) {
			ctx := context.Background()
			rdb := redis.NewClient(&redis.Options{Addr: sharedAddr})
			defer rdb.Close()
			r := rand.New(rand.NewPCG(9, 10))
			es := make([]contentseen.Entry, n)
			for i := range es {
				es[i] = benchEntry(r, i)
			}
			var took time.Duration
			var cpu float64
			for b.Loop() {
				x, err := Open(ctx, rdb, Options{Name: newName(), SharedOptions: contentseen.SharedOptions{K: 7}})
				if err != nil {
					b.Fatal(err)
				}
				cpu0, t0 := serverCPU(b, rdb), time.Now()
				if how == "Load" {
					err = x.Load(ctx, es)
				} else {
					err = x.BulkLoad(ctx, es)
				}
				if err != nil {
					b.Fatal(err)
				}
				took += time.Since(t0)
				cpu += serverCPU(b, rdb) - cpu0
				if err := x.Close(); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := rdb.FlushDB(ctx).Err(); err != nil { // the test server is this process's own
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(n*b.N)/took.Seconds(), "entries/s")
			b.ReportMetric(cpu*1e6/float64(n*b.N), "redis-µs/entry")
		})
	}
}
