package storage

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

var benchSeed atomic.Uint64

// cpuTime is the user+system CPU time of the process so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchDir holds the 100k-page store shared by benchmark runs of one
// process; TestMain removes it.
var benchDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		if err := os.RemoveAll(benchDir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

const (
	benchBody = 50 << 10 // raw body per page
	benchText = 5 << 10  // extracted text per page
)

// benchPages returns realistic bodies: the corpus's real pages cut or
// repeated to 50 KB (synthetic markup when the corpus is absent), and
// texts made of their words.
var benchPages = sync.OnceValue(func() (pages [][2][]byte) {
	files, _ := filepath.Glob("../../shared/corpus/*/*/*.html") // a glob error is a bad pattern: none here
	tags := regexp.MustCompile(`(?s)<script.*?</script>|<style.*?</style>|<[^>]*>|\s+`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || len(b) < 4096 {
			continue
		}
		pages = append(pages, [2][]byte{fill(b, benchBody), fill(tags.ReplaceAll(b, []byte(" ")), benchText)})
	}
	if len(pages) == 0 {
		r := rand.New(rand.NewPCG(1, 2))
		for range 50 {
			var b []byte
			for len(b) < benchBody {
				b = fmt.Appendf(b, "<div class=\"c%d\"><p>word%d word%d word%d</p></div>\n", r.IntN(50), r.IntN(5000), r.IntN(5000), r.IntN(5000))
			}
			pages = append(pages, [2][]byte{b[:benchBody], tags.ReplaceAll(b, []byte(" "))[:benchText]})
		}
	}
	return pages
})

// fill repeats b to exactly n bytes.
func fill(b []byte, n int) []byte {
	out := make([]byte, 0, n)
	for len(out) < n {
		out = append(out, b[:min(len(b), n-len(out))]...)
	}
	return out
}

func benchPage(r *rand.Rand, i int) *Page {
	src := benchPages()[i%len(benchPages())]
	var d [16]byte
	for j := range d {
		d[j] = byte(r.Uint32())
	}
	return &Page{
		URL:         fmt.Sprintf("https://host%d.example/articles/%x", r.IntN(1000), r.Uint64()),
		Status:      200,
		ContentType: "text/html; charset=utf-8",
		FetchedAt:   time.Now(),
		Depth:       3,
		Title:       "A benchmark page",
		Text:        string(src[1]),
		Fingerprint: r.Uint64(),
		Digest:      d,
		Body:        src[0],
		Header: http.Header{
			"Content-Type":  {"text/html; charset=utf-8"},
			"Date":          {"Sun, 22 Nov 2026 14:00:00 GMT"},
			"Cache-Control": {"max-age=600"},
			"Etag":          {fmt.Sprintf("%q", fmt.Sprint(r.Uint64()))},
		},
	}
}

// bigStore builds, once per process, a store of 100,000 pages with bodies
// of realistic compressed size. To build it in seconds it compresses each
// distinct body once and writes the frame itself, 1,000 pages per
// transaction; PutTx writes everything else.
var bigStore = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "storage-bench")
	if err != nil {
		return "", err
	}
	benchDir = dir
	path := filepath.Join(dir, "big.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{NoSync: true})
	if err != nil {
		return "", err
	}
	s, err := New(db, DefaultOptions())
	if err != nil {
		return "", err
	}
	var frames [][]byte
	for _, p := range benchPages() {
		frames = append(frames, compress(p[0]))
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 100_000; {
		err := db.Update(func(tx *bolt.Tx) error {
			b, err := s.buckets(tx)
			if err != nil {
				return err
			}
			for end := i + 1000; i < end; i++ {
				p := benchPage(r, i)
				p.Body = nil
				p.Text = p.Text[:200]
				id, err := s.PutTx(tx, p)
				if err != nil {
					return err
				}
				if err := b.body.Put(itob(id), frames[i%len(frames)]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	return path, db.Close()
})

// BenchmarkPutTx stores ~50 KB pages one per write transaction, as the
// crawler does, in an empty store and in one of 100,000 pages. NoSync
// leaves out the fsync, which is the disk's cost, not the store's; the
// sync=true case shows it.
func BenchmarkPutTx(b *testing.B) {
	for _, tc := range []struct {
		name   string
		big    bool
		noSync bool
	}{
		{"store=empty", false, true},
		{"store=100k", true, true},
		{"store=empty/sync=true", false, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			benchPages() // load the corpus outside the timed loop
			path := filepath.Join(b.TempDir(), "empty.db")
			if tc.big {
				var err error
				if path, err = bigStore(); err != nil {
					b.Fatal(err)
				}
			}
			db, err := bolt.Open(path, 0o600, &bolt.Options{NoSync: tc.noSync, Timeout: time.Second})
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				if err := db.Close(); err != nil {
					b.Error(err)
				}
			}()
			s, err := New(db, DefaultOptions())
			if err != nil {
				b.Fatal(err)
			}
			// A new seed per run: runs append to the same 100k store.
			r := rand.New(rand.NewPCG(5, benchSeed.Add(1)))
			cpu0 := cpuTime(b)
			b.SetBytes(benchBody + benchText)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				p := benchPage(r, i)
				i++
				if err := db.Update(func(tx *bolt.Tx) error { _, err := s.PutTx(tx, p); return err }); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
			// On a shared machine wall time includes waiting for a core;
			// the process's CPU time per page does not.
			b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N)/1e3, "cpu-µs/page")
		})
	}
}
