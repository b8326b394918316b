package webview

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/storage"
)

// fakeLive is a crawl's progress as the test sets it.
type fakeLive struct{ stored atomic.Int64 }

func (f *fakeLive) Stats() crawler.Stats           { return crawler.Stats{Stored: f.stored.Load()} }
func (f *fakeLive) HostDelay(string) time.Duration { return time.Second }

// TestLiveRefresh writes to a data directory the view reads, as a crawl
// does beside its view, and checks when the view sees it: at once when a
// read is cheap, and after a background read otherwise, with the last
// snapshot served meanwhile.
func TestLiveRefresh(t *testing.T) {
	for _, background := range []bool{false, true} {
		dir := fakeCrawl(t, 3, 1, plainTitle, plainText)
		db, err := bolt.Open(filepath.Join(dir, crawler.DBFile), 0o600, &bolt.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		st, err := storage.New(db, storage.Options{KeepDropText: true})
		if err != nil {
			t.Fatal(err)
		}
		live := &fakeLive{}
		s, err := New(context.Background(), Options{Sources: []*crawler.Data{{DB: db, Store: st, Dir: dir}}, Live: live, K: 3, Refresh: time.Nanosecond})
		if err != nil {
			t.Fatal(err)
		}
		if background {
			s.cheap = 0 // every read counts as expensive
		}
		if _, body := get(t, s, "/"); !strings.Contains(body, `id="stored">3<`) || !strings.Contains(body, "1s") {
			t.Fatalf("live overview before: want 3 stored and the host delay:\n%s", body)
		}
		if err := db.Update(func(tx *bolt.Tx) error {
			_, err := st.PutTx(tx, &storage.Page{URL: "http://new.example/", Status: 200, Text: plainText(9, -1), Fingerprint: 9})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		live.stored.Add(1)
		_, body := get(t, s, "/")
		if background {
			if !strings.Contains(body, `id="stored">3<`) {
				t.Errorf("background: the request waited for the read (want the last snapshot, 3 stored)")
			}
			s.readers.Wait()
			_, body = get(t, s, "/")
		}
		if !strings.Contains(body, `id="stored">4<`) {
			t.Errorf("background=%v: after the crawl stored a page the view shows:\n%s", background, summaryCards(body))
		}
		s.Close()
	}
}

func summaryCards(body string) string {
	i := strings.Index(body, `<section class="cards">`)
	j := strings.Index(body, `</section>`)
	if i < 0 || j < i {
		return "(no cards)"
	}
	return body[i:j]
}
