package contentseen

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// BenchmarkIndexBoltProcess measures a bulk-built bbolt index the way a
// crawl process meets it: the index is built (in a file whose bbolt free
// list is kept, as the crawler's crawl.db is) and closed, then a fresh
// process (this test binary, running TestBoltIndexChild) opens it as the
// crawler opens crawl.db and
//
//   - warm: queries every query once, then reports k=3 p50/p99 over
//     200,000 more and its resident memory (VmRSS, VmHWM, Go heap);
//   - cold: drops the file from the page cache (posix_fadvise DONTNEED),
//     opens it read-only and reports p50/p99 of its first 2,000 queries;
//   - seen: records 200,000 new random fingerprints with Seen from 64
//     goroutines (an fsync per group commit, as the crawler writes; the
//     delta grows and merges run) between queries, and reports resident
//     memory.
//
// It also reports the tables' bits per fingerprint against the floor.
// Sizes: 1M; 10M with SIMCRAWL_BIG=1; 100M with SIMCRAWL_HUGE=1 (about 15
// minutes and 12 GB of memory to build, 6 GB of disk).
//
//	SIMCRAWL_BIG=1 go test -run '^$' -bench 'IndexBoltProcess' -benchtime 1x -timeout 2h ./contentseen/
func BenchmarkIndexBoltProcess(b *testing.B) {
	sizes := benchSizes(b)
	if os.Getenv("SIMCRAWL_HUGE") == "1" {
		sizes = append(sizes, 1e8)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("n=%.0e", float64(n)), func(b *testing.B) {
			dir := b.TempDir()
			path := filepath.Join(dir, "index.db")
			start := time.Now()
			space := buildBigIndex(b, path, n)
			b.Logf("n=%d: built in %v", n, time.Since(start).Round(time.Second))
			fi, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			figures := map[string]float64{}
			for b.Loop() {
				for _, mode := range []string{"warm", "cold", "seen"} {
					for k, v := range runIndexChild(b, path, n, mode) {
						figures[mode+"-"+k] = v
					}
				}
			}
			for k, v := range figures {
				b.ReportMetric(v, k)
			}
			var maxBits float64
			for _, v := range space.fpBits {
				maxBits = max(maxBits, v)
			}
			b.ReportMetric(maxBits, "bits/fp/table")
			b.ReportMetric(floorBits(n), "floor-bits")
			b.ReportMetric(space.pageBits-space.idBits/float64(len(space.fpBits)), "page-bits/fp/table")
			b.ReportMetric(float64(fi.Size())/float64(n), "file-B/fp")
		})
	}
}

// buildBigIndex bulk-loads n random fingerprints (ids 0..n-1, 10,000 of
// them planted around the bases of childQueries) into a new index file.
func buildBigIndex(b *testing.B, path string, n int) tableSpace {
	ids := make([]uint64, n)
	fps := make([]Fingerprint, n)
	rng := rand.New(rand.NewPCG(uint64(n), 42))
	for i := range n {
		ids[i] = uint64(i)
		if i < 10_000 {
			fps[i] = plant(rng, baseFP(i%2000), i/2000)
		} else {
			fps[i] = Fingerprint(rng.Uint64())
		}
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	x, err := NewBoltIndex(db, BoltOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if err := x.AddBatch(context.Background(), ids, fps); err != nil {
		b.Fatal(err)
	}
	ids, fps = nil, nil
	s := measureSpace(b, x)
	if err := x.Close(); err != nil {
		b.Fatal(err)
	}
	return s
}

// childQueries are half 1 bit from a planted base, half random.
func childQueries(count int) []Fingerprint {
	rng := rand.New(rand.NewPCG(7, 7))
	qs := make([]Fingerprint, count)
	for i := range qs {
		if i%2 == 0 {
			qs[i] = plant(rng, baseFP(i/2%2000), 1)
		} else {
			qs[i] = Fingerprint(rng.Uint64())
		}
	}
	return qs
}

// runIndexChild runs TestBoltIndexChild in a new process and returns the
// figures it prints.
func runIndexChild(b *testing.B, path string, n int, mode string) map[string]float64 {
	cmd := exec.Command(os.Args[0], "-test.run=^TestBoltIndexChild$", "-test.v")
	cmd.Env = childEnv("SIMCRAWL_CHILD_INDEX="+path, "SIMCRAWL_CHILD_MODE="+mode)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("child %s: %v\n%s", mode, err, out)
	}
	res := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "RESULT ") {
			continue
		}
		for _, kv := range strings.Fields(line)[1:] {
			k, v, _ := strings.Cut(kv, "=")
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				b.Fatalf("child %s: bad figure %q", mode, kv)
			}
			res[k] = f
		}
	}
	if len(res) == 0 {
		b.Fatalf("child %s printed no RESULT:\n%s", mode, out)
	}
	b.Logf("n=%d %s: %v", n, mode, res)
	return res
}

// TestBoltIndexChild is BenchmarkIndexBoltProcess's child process; it does
// nothing unless started by it.
func TestBoltIndexChild(t *testing.T) {
	path, mode := os.Getenv("SIMCRAWL_CHILD_INDEX"), os.Getenv("SIMCRAWL_CHILD_MODE")
	if path == "" {
		t.Skip("only run by BenchmarkIndexBoltProcess")
	}
	if mode == "cold" {
		if err := dropPageCache(path); err != nil {
			t.Fatal(err)
		}
	}
	res := map[string]float64{}
	var x *BoltIndex
	var err error
	t0 := time.Now()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: mode == "cold"})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	x, err = NewBoltIndex(db, BoltOptions{})
	res["open-s"] = time.Since(t0).Seconds()
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	ctx := context.Background()
	qs := childQueries(1 << 16)
	near := func(count int) []time.Duration {
		lat := make([]time.Duration, count)
		for i := range lat {
			t0 := time.Now()
			if _, err := x.Near(ctx, qs[i%len(qs)], 3); err != nil {
				t.Fatal(err)
			}
			lat[i] = time.Since(t0)
		}
		slices.Sort(lat)
		return lat
	}
	switch mode {
	case "cold":
		lat := near(2000)
		res["p50-us"], res["p99-us"] = us(lat[len(lat)/2]), us(lat[len(lat)*99/100])
	case "warm":
		near(len(qs))
		lat := near(200_000)
		res["p50-us"], res["p99-us"] = us(lat[len(lat)/2]), us(lat[len(lat)*99/100])
	case "seen":
		near(len(qs))
		rng := rand.New(rand.NewPCG(9, 9))
		// Ids go on from the index's, drawn as each call starts: about in
		// order, as the crawler's page ids (a sequence drawn in the
		// recording transaction) are. A block's ids take the bytes its
		// largest needs, and the fps bucket is appended to.
		var next atomic.Uint64
		next.Store(uint64(x.Len()))
		for range 200 {
			done := make(chan error, 64)
			for range 64 {
				fps := []Fingerprint{}
				for range 16 {
					fps = append(fps, Fingerprint(rng.Uint64()))
				}
				go func() {
					for _, fp := range fps {
						if _, _, err := x.Seen(ctx, next.Add(1)-1, fp); err != nil {
							done <- err
							return
						}
					}
					done <- nil
				}()
			}
			for range 64 {
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			}
			near(1000)
		}
		if err := x.Checkpoint(ctx); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	res["heap-MB"] = float64(ms.HeapInuse) / 1e6
	rss, hwm := procStatus(t, "VmRSS"), procStatus(t, "VmHWM")
	res["rss-MB"], res["hwm-MB"] = rss/1e3, hwm/1e3
	// Anonymous memory (heap, stacks) and file pages mapped in (bbolt's
	// mmap: clean, the kernel takes them back under memory pressure).
	res["anon-MB"], res["file-MB"] = procStatus(t, "RssAnon")/1e3, procStatus(t, "RssFile")/1e3
	fields := []string{"RESULT"}
	for k, v := range res {
		fields = append(fields, fmt.Sprintf("%s=%.2f", k, v))
	}
	fmt.Println(strings.Join(fields, " "))
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// procStatus returns a kB figure of /proc/self/status.
func procStatus(t *testing.T, key string) float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, key+":"); ok {
			f := strings.Fields(rest)
			v, err := strconv.ParseFloat(f[0], 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatalf("no %s in /proc/self/status", key)
	return 0
}
