package webview

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/storage"
)

// fakeCrawl writes a data directory directly through storage (no crawl):
// pages stored pages, each with drops drops, whose titles and texts are
// made by title and text (i is the page, j the drop or -1 for the page).
// It is how the tests and the benchmark get 100,000 drops in seconds.
func fakeCrawl(tb testing.TB, pages, drops int, title func(i, j int) string, text func(i, j int) string) string {
	tb.Helper()
	dir := tb.TempDir()
	db, err := bolt.Open(filepath.Join(dir, crawler.DBFile), 0o600, &bolt.Options{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	st, err := storage.New(db, storage.Options{KeepDropText: true})
	if err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	const batch = 500
	for lo := 0; lo < pages; lo += batch {
		if err := db.Update(func(tx *bolt.Tx) error {
			for i := lo; i < min(lo+batch, pages); i++ {
				fp := rng.Uint64()
				at = at.Add(37 * time.Millisecond)
				p := &storage.Page{URL: fmt.Sprintf("http://site%d.example/page/%d", i%7, i), Status: 200,
					ContentType: "text/html", FetchedAt: at, Title: title(i, -1), Text: text(i, -1), Fingerprint: fp}
				p.Digest[0], p.Digest[1], p.Digest[2] = byte(i), byte(i>>8), byte(i>>16)
				id, err := st.PutTx(tx, p)
				if err != nil {
					return err
				}
				for j := range drops {
					dist := (i + j) % 4
					fpD := fp ^ (1<<uint(dist) - 1)
					reason := storage.ReasonNear
					if dist == 0 {
						reason = storage.ReasonExact
					}
					at = at.Add(37 * time.Millisecond)
					if err := st.PutDropTx(tx, &storage.Drop{URL: fmt.Sprintf("http://mirror%d.example/copy/%d/%d", j%5, i, j),
						Title: title(i, j), FetchedAt: at, DuplicateOf: id, Distance: dist, Reason: reason,
						Fingerprint: fpD, MatchedFingerprint: fp, Text: text(i, j)}); err != nil {
						return err
					}
				}
			}
			return nil
		}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// openView opens dir read-only and starts a Server on it.
func openView(tb testing.TB, dir string) *Server {
	tb.Helper()
	d, err := crawler.OpenData(dir, 0)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := d.Close(); err != nil {
			tb.Error(err)
		}
	})
	s, err := New(context.Background(), Options{Sources: []*crawler.Data{d}, K: 3, Config: "k: 3\n"})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// plainTitle and plainText give every page its own words; a drop is its
// page's text with one word changed.
func plainTitle(i, j int) string { return fmt.Sprintf("Article %d copy %d", i, j) }

func plainText(i, j int) string {
	var b strings.Builder
	for w := range 60 {
		if j >= 0 && w == 30 {
			fmt.Fprintf(&b, "changed%d ", j)
			continue
		}
		fmt.Fprintf(&b, "word%d-%d ", i, w)
	}
	return b.String()
}
