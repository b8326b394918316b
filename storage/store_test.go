package storage

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// openDB opens a real bbolt file. NoSync only spares the shared machine's
// disk: reopening in the same process reads the page cache either way.
func openDB(t testing.TB, path string, ro bool) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: ro, NoSync: true})
	if err != nil {
		t.Fatalf("bolt.Open(%s): %v", path, err)
	}
	return db
}

// newStore opens a fresh DB in a temp dir; the DB is closed at cleanup.
func newStore(t testing.TB, o Options) (*Store, *bolt.DB) {
	t.Helper()
	db := openDB(t, filepath.Join(t.TempDir(), "crawl.db"), false)
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("close db: %v", err)
		}
	})
	s, err := New(db, o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s, db
}

func put(t testing.TB, s *Store, db *bolt.DB, p *Page) uint64 {
	t.Helper()
	var id uint64
	err := db.Update(func(tx *bolt.Tx) error {
		var err error
		id, err = s.PutTx(tx, p)
		return err
	})
	if err != nil {
		t.Fatalf("PutTx(%s): %v", p.URL, err)
	}
	return id
}

func digest(s string) (d [16]byte) {
	copy(d[:], s)
	return d
}

func samplePage(url string) *Page {
	return &Page{
		URL:         url,
		FinalURL:    strings.Replace(url, "http://", "https://", 1),
		Status:      200,
		ContentType: "text/html; charset=utf-8",
		FetchedAt:   time.Date(2026, 11, 22, 13, 57, 1, 123456789, time.UTC),
		Depth:       2,
		Title:       "Title of " + url,
		Text:        strings.Repeat("Some extracted text <b>&amp; more</b>. ", 40),
		Lang:        "en",
		Fingerprint: 0x0123456789abcdef,
		Digest:      digest("d:" + url),
		Body:        []byte(strings.Repeat("<p>raw body of "+url+"</p>\n", 200)),
		Truncated:   true,
		Header:      http.Header{"Content-Type": {"text/html; charset=utf-8"}, "Set-Cookie": {"a=1", "b=2"}},
	}
}

func TestPutGetRoundTrip(t *testing.T) {
	s, db := newStore(t, DefaultOptions())
	want := samplePage("http://example.com/a")
	id := put(t, s, db, want)
	if id != 1 || want.ID != 1 {
		t.Fatalf("PutTx = %d, p.ID = %d, want 1, 1", id, want.ID)
	}
	want.TextLen, want.BodyLen = len(want.Text), len(want.Body)

	var inTx *Page
	if err := db.View(func(tx *bolt.Tx) error {
		var err error
		inTx, err = s.GetTx(tx, id)
		return err
	}); err != nil {
		t.Fatalf("GetTx: %v", err)
	}
	got, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	for name, p := range map[string]*Page{"GetTx": inTx, "Get": got} {
		if !reflect.DeepEqual(p, want) {
			t.Errorf("%s(%d) =\n%+v\nwant\n%+v", name, id, p, want)
		}
	}
	// The page owns its memory: scribbling on it after the transaction
	// must neither crash (mmap is read-only) nor change the store.
	for i := range inTx.Body {
		inTx.Body[i] = 'x'
	}
	again, err := s.Get(context.Background(), id)
	if err != nil || !reflect.DeepEqual(again.Body, want.Body) {
		t.Errorf("body changed after writing to a returned copy (err %v)", err)
	}

	empty := &Page{URL: "http://example.com/empty", Thin: true}
	put(t, s, db, empty)
	e, err := s.Get(context.Background(), empty.ID)
	if err != nil || e.Text != "" || e.Body != nil || e.Header != nil || !e.Thin {
		t.Errorf("Get(empty page) = %+v, %v; want no text, nil body, thin", e, err)
	}
	if _, err := s.Get(context.Background(), 99); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get(99) error = %v, want ErrNotFound", err)
	}
}

func TestLookups(t *testing.T) {
	ctx := context.Background()
	s, db := newStore(t, DefaultOptions())
	a := samplePage("http://example.com/a")
	put(t, s, db, a)
	b := samplePage("http://example.com/b")
	b.Digest = a.Digest // same text: first page keeps the digest
	b.FinalURL = a.FinalURL
	put(t, s, db, b)
	thin := &Page{URL: "http://example.com/thin", Thin: true, Digest: digest("thin")}
	put(t, s, db, thin)
	zero := &Page{URL: "http://example.com/zero"}
	put(t, s, db, zero)

	for _, tc := range []struct {
		url    string
		wantID uint64
	}{
		{a.URL, a.ID}, {b.URL, b.ID}, {a.FinalURL, a.ID}, {thin.URL, thin.ID},
	} {
		p, err := s.ByURL(ctx, tc.url)
		if err != nil || p.ID != tc.wantID {
			t.Errorf("ByURL(%s) = %v, %v; want page %d", tc.url, p, err, tc.wantID)
		}
	}
	if _, err := s.ByURL(ctx, "http://example.com/none"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ByURL(unknown) error = %v, want ErrNotFound", err)
	}

	err := db.View(func(tx *bolt.Tx) error {
		for _, tc := range []struct {
			name   string
			d      [16]byte
			wantID uint64
			wantOK bool
		}{
			{"first wins", a.Digest, a.ID, true},
			{"thin not indexed", thin.Digest, 0, false},
			{"zero not indexed", [16]byte{}, 0, false},
			{"unknown", digest("nope"), 0, false},
		} {
			if id, ok := s.ByDigestTx(tx, tc.d); id != tc.wantID || ok != tc.wantOK {
				t.Errorf("%s: ByDigestTx = %d, %v; want %d, %v", tc.name, id, ok, tc.wantID, tc.wantOK)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	dup := samplePage(a.URL)
	err = db.Update(func(tx *bolt.Tx) error { _, err := s.PutTx(tx, dup); return err })
	if !errors.Is(err, ErrExists) {
		t.Errorf("PutTx(stored url) error = %v, want ErrExists", err)
	}
}

func TestRollbackLeavesNothing(t *testing.T) {
	ctx := context.Background()
	s, db := newStore(t, DefaultOptions())
	p := samplePage("http://example.com/a")
	boom := errors.New("boom")
	err := db.Update(func(tx *bolt.Tx) error {
		if _, err := s.PutTx(tx, p); err != nil {
			return err
		}
		if err := s.PutDropTx(tx, &Drop{URL: "http://example.com/d", Reason: ReasonExact, DuplicateOf: p.ID}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update = %v, want boom", err)
	}
	if pages, drops, err := s.Counts(ctx); pages != 0 || drops != 0 || err != nil {
		t.Errorf("Counts = %d, %d, %v; want 0, 0, nil", pages, drops, err)
	}
	if _, err := s.ByURL(ctx, p.URL); !errors.Is(err, ErrNotFound) {
		t.Errorf("ByURL after rollback: %v, want ErrNotFound", err)
	}
	if _, err := s.DropByURL(ctx, "http://example.com/d"); !errors.Is(err, ErrNotFound) {
		t.Errorf("DropByURL after rollback: %v, want ErrNotFound", err)
	}
	if err := db.View(func(tx *bolt.Tx) error {
		if _, ok := s.ByDigestTx(tx, p.Digest); ok {
			t.Errorf("ByDigestTx after rollback found a page")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := s.Pages(ctx, true, func(*Page) error { n++; return nil }); err != nil || n != 0 {
		t.Errorf("Pages after rollback: %d pages, %v", n, err)
	}
	// The rolled-back ID was never visible, so handing it out again is fine.
	if id := put(t, s, db, samplePage("http://example.com/b")); id != 1 {
		t.Errorf("first committed ID = %d, want 1", id)
	}
}

func TestIDsNotReusedAcrossReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crawl.db")
	db := openDB(t, path, false)
	s, err := New(db, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		put(t, s, db, samplePage(fmt.Sprintf("http://example.com/%d", i)))
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = openDB(t, path, false)
	defer func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	}()
	if s, err = New(db, DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	if id := put(t, s, db, samplePage("http://example.com/new")); id != 4 {
		t.Errorf("ID after reopen = %d, want 4", id)
	}

	// Replacing page 2 keeps its ID, moves its URL index, keeps the count.
	r := samplePage("http://example.com/renamed")
	r.ID = 2
	if id := put(t, s, db, r); id != 2 {
		t.Errorf("replace: ID = %d, want 2", id)
	}
	if _, err := s.ByURL(ctx, "http://example.com/1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("old URL of replaced page: %v, want ErrNotFound", err)
	}
	if p, err := s.ByURL(ctx, r.URL); err != nil || p.ID != 2 {
		t.Errorf("ByURL(new URL of replaced page) = %v, %v", p, err)
	}
	if pages, _, err := s.Counts(ctx); pages != 4 || err != nil {
		t.Errorf("Counts = %d, %v; want 4 pages", pages, err)
	}
	// An explicit ID above the sequence moves the sequence past it.
	put(t, s, db, &Page{URL: "http://example.com/x", ID: 10})
	if id := put(t, s, db, &Page{URL: "http://example.com/y"}); id != 11 {
		t.Errorf("ID after explicit 10 = %d, want 11", id)
	}
}

func TestReadOnlyDB(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crawl.db")
	db := openDB(t, path, false) // a DB another component made, without our buckets
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ro := openDB(t, path, true)
	s, err := New(ro, DefaultOptions())
	if err != nil {
		t.Fatalf("New(read-only, no buckets): %v", err)
	}
	if p, d, err := s.Counts(ctx); p != 0 || d != 0 || err != nil {
		t.Errorf("Counts = %d, %d, %v", p, d, err)
	}
	if _, err := s.ByURL(ctx, "http://x/"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ByURL on empty read-only store: %v, want ErrNotFound", err)
	}
	if err := s.Pages(ctx, true, func(*Page) error { return errors.New("no pages expected") }); err != nil {
		t.Error(err)
	}
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}

	db = openDB(t, path, false)
	w, err := New(db, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	put(t, w, db, samplePage("http://example.com/a"))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ro = openDB(t, path, true)
	defer func() {
		if err := ro.Close(); err != nil {
			t.Error(err)
		}
	}()
	if s, err = New(ro, DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	if p, err := s.ByURL(ctx, "http://example.com/a"); err != nil || p.ID != 1 {
		t.Errorf("ByURL read-only = %v, %v", p, err)
	}
}

func TestFormatVersionChecked(t *testing.T) {
	s, db := newStore(t, DefaultOptions())
	if err := db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(s.bucket).Put(kFormat, []byte{99})
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := New(db, DefaultOptions()); !errors.Is(err, ErrFormat) {
		t.Errorf("New on format 99: %v, want ErrFormat", err)
	}
}

// TestPagesStreamsInOrder stores pages over several transactions and
// scans them: in ID order, whole, across chunk boundaries (3,000 pages are
// a dozen chunks of scanChunkRecords, in a B+tree of several levels),
// stopped by fn's error and by a cancel within a chunk.
func TestPagesStreamsInOrder(t *testing.T) {
	ctx := context.Background()
	s, db := newStore(t, DefaultOptions())
	const n, perTx = 3000, 1000
	if n < 10*scanChunkRecords {
		t.Fatalf("%d pages are not several chunks of %d", n, scanChunkRecords)
	}
	for start := 0; start < n; start += perTx {
		err := db.Update(func(tx *bolt.Tx) error {
			for i := start; i < start+perTx; i++ {
				p := &Page{URL: fmt.Sprintf("http://example.com/%d", i), Text: fmt.Sprintf("text %d", i), Body: []byte("b")}
				if _, err := s.PutTx(tx, p); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if pages, _, err := s.Counts(ctx); pages != n || err != nil {
		t.Fatalf("Counts = %d, %v; want %d", pages, err, n)
	}
	var want uint64 = 1
	err := s.Pages(ctx, true, func(p *Page) error {
		if p.ID != want || p.Text != fmt.Sprintf("text %d", want-1) || string(p.Body) != "b" {
			return fmt.Errorf("page %d (%q, %q), want page %d", p.ID, p.Text, p.Body, want)
		}
		want++
		return nil
	})
	if err != nil || want != n+1 {
		t.Fatalf("Pages: %v after %d pages", err, want-1)
	}
	headers := 0
	if err := s.PageHeaders(ctx, func(p *Page) error {
		headers++
		if p.Text != "" || p.Body != nil || p.Header != nil || p.BodyLen != 1 {
			return fmt.Errorf("header of page %d has text %q body %q bodylen %d", p.ID, p.Text, p.Body, p.BodyLen)
		}
		return nil
	}); err != nil || headers != n {
		t.Fatalf("PageHeaders: %v after %d pages", err, headers)
	}

	stop := errors.New("stop")
	seen := 0
	if err := s.Pages(ctx, false, func(*Page) error { seen++; return stop }); !errors.Is(err, stop) || seen != 1 {
		t.Errorf("Pages with failing fn = %v after %d calls, want stop after 1", err, seen)
	}
	cctx, cancel := context.WithCancel(ctx)
	seen = 0
	err = s.Pages(cctx, false, func(*Page) error {
		if seen++; seen == 300 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || seen != 300 {
		t.Errorf("Pages after cancel = %v after %d calls, want Canceled after 300", err, seen)
	}
}

// TestConcurrentUse runs writers and readers at once, for the race detector.
func TestConcurrentUse(t *testing.T) {
	ctx := context.Background()
	s, db := newStore(t, DefaultOptions())
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 25 {
				p := samplePage(fmt.Sprintf("http://example.com/%d/%d", w, i))
				err := db.Update(func(tx *bolt.Tx) error { _, err := s.PutTx(tx, p); return err })
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := s.Get(ctx, p.ID); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range 5 {
			if err := s.Pages(ctx, true, func(*Page) error { return nil }); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()
	if pages, _, err := s.Counts(ctx); pages != 100 || err != nil {
		t.Errorf("Counts = %d, %v; want 100", pages, err)
	}
}
