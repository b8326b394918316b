package frontier

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func BenchmarkCanonical(b *testing.B) {
	in := "HTTPS://News.Example.COM:443/a/./b/../新闻/页.html?utm_source=x&id=42&lang=zh#comments"
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := Canonical(in); err != nil {
			b.Fatal(err)
		}
	}
}

func benchDB(b *testing.B, noSync bool) *bolt.DB {
	b.Helper()
	db, err := bolt.Open(filepath.Join(b.TempDir(), "bench.db"), 0o600,
		&bolt.Options{Timeout: time.Second, NoSync: noSync})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := db.Close(); err != nil {
			b.Error(err)
		}
	})
	return db
}

// BenchmarkAdd adds the 50 links of one page (one host) per operation in
// one transaction, as the crawler does.
func BenchmarkAdd(b *testing.B) {
	for _, sync := range []bool{false, true} {
		b.Run(fmt.Sprintf("links=50/fsync=%v", sync), func(b *testing.B) {
			f, err := New(benchDB(b, !sync), Options{})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			items := make([]Item, 50)
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				host := fmt.Sprintf("host%04d.example", n%1000)
				for i := range items {
					items[i] = Item{URL: fmt.Sprintf("http://%s/page-%09d.html", host, n*50+i), Depth: 1}
				}
				if _, err := f.Add(ctx, items...); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*len(items)), "ns/url")
		})
	}
}

// BenchmarkNextDone hands out and completes one URL per operation from a
// frontier of 1,000 hosts kept at 20,000 or more pending URLs.
func BenchmarkNextDone(b *testing.B) {
	for _, sync := range []bool{false, true} {
		b.Run(fmt.Sprintf("hosts=1000/fsync=%v", sync), func(b *testing.B) {
			f, err := New(benchDB(b, !sync), Options{PerHostDelay: -1})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			next := 0
			refill := func() {
				for h := range 1000 {
					items := make([]Item, 20)
					for i := range items {
						items[i] = Item{URL: fmt.Sprintf("http://host%04d.example/p%09d", h, next), Depth: next / 100000}
						next++
					}
					if _, err := f.Add(ctx, items...); err != nil {
						b.Fatal(err)
					}
				}
			}
			refill()
			b.ReportAllocs()
			for b.Loop() {
				if f.Stats().Pending < 1000 {
					b.StopTimer()
					refill()
					b.StartTimer()
				}
				it, err := f.Next(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if err := f.Done(ctx, it, "stored"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
