package main

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/internal/demosite"
	"github.com/simcrawl/simcrawl/storage"
)

// crawlDemoSite crawls a new demo site into data with the extra flags and
// returns the site's URL.
func crawlDemoSite(t *testing.T, data string, flags ...string) string {
	t.Helper()
	srv := httptest.NewServer(demosite.New())
	t.Cleanup(srv.Close)
	seeds := writeFile(t, t.TempDir(), "seeds.txt", srv.URL+"/\n")
	args := append([]string{"--seeds", seeds, "--data", data,
		"--set", "fetch.delay=0s", "--set", "fetch.parallelism=1", "--set", "log.level=warn"}, flags...)
	if _, errOut, err := run(t, "", args...); err != nil {
		t.Fatalf("crawl: %v\n%s", err, errOut)
	}
	return srv.URL
}

// nearDrops returns the drop log's near-duplicate drops of pages under
// prefix, as url -> duplicate_of.
func nearDrops(t *testing.T, data, prefix string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(data, "dropped.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	drops := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r struct {
			URL         string `json:"url"`
			DuplicateOf string `json:"duplicate_of"`
			Reason      string `json:"reason"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("drop log line %q: %v", line, err)
		}
		if r.Reason == "near" && strings.HasPrefix(r.URL, prefix) {
			drops[r.URL] = r.DuplicateOf
		}
	}
	return drops
}

// indexState is what a data directory's index records, and whether every
// stored page's fingerprint is found in it under the page's ID.
type indexState struct {
	layout    string
	len       int
	leftover  bool // a bucket of an unfinished migration
	allStored bool
}

func readIndexState(t *testing.T, data string) indexState {
	t.Helper()
	d, err := crawler.OpenData(data, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var st indexState
	if err := d.DB.View(func(tx *bolt.Tx) error {
		st.leftover = tx.Bucket([]byte(migrateBucket)) != nil
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var x *contentseen.BoltIndex
	st.layout, x = openDataIndex(t, d)
	defer x.Close()
	st.allStored = true
	ctx := context.Background()
	err = d.Store.PageHeaders(ctx, func(p *storage.Page) error {
		if p.Thin {
			return nil
		}
		ms, err := x.Near(ctx, contentseen.Fingerprint(p.Fingerprint), 0)
		if err != nil {
			return err
		}
		if len(ms) != 1 || ms[0].ID != p.ID {
			t.Errorf("stored page %d %s: Near(its fingerprint, 0) = %+v, want its own ID", p.ID, p.URL, ms)
			st.allStored = false
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	st.len = x.Len()
	return st
}

// A migrated index answers for every stored page, stats and dups print
// what they printed before, and the next crawl (layout auto) drops
// near-duplicates of the pages crawled before the migration.
func TestIndexMigrate(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	site1 := crawlDemoSite(t, data)
	before := readIndexState(t, data)
	if before.layout != contentseen.Layout4x16 || before.len == 0 || !before.allStored {
		t.Fatalf("before the migration: %+v", before)
	}
	stats, _, err := run(t, "", "stats", "--data", data)
	if err != nil {
		t.Fatal(err)
	}
	dups, _, err := run(t, "", "dups", "--data", data)
	if err != nil {
		t.Fatal(err)
	}

	_, errOut, err := run(t, "", "index", "migrate", "--data", data, "--layout", "10x28")
	if err != nil {
		t.Fatalf("index migrate: %v\n%s", err, errOut)
	}
	if !strings.Contains(errOut, "from layout 4x16 to 10x28") || !strings.Contains(errOut, "contentseen.layout=10x28") {
		t.Errorf("index migrate said:\n%s", errOut)
	}
	after := readIndexState(t, data)
	if want := (indexState{layout: contentseen.Layout10x28, len: before.len, allStored: true}); after != want {
		t.Errorf("after the migration: %+v, want %+v", after, want)
	}
	// Nothing changes but the layout stats reports.
	stats = strings.Replace(stats, "; layout 4x16;", "; layout 10x28;", 1)
	for _, c := range []struct{ cmd, before string }{{"stats", stats}, {"dups", dups}} {
		out, _, err := run(t, "", c.cmd, "--data", data)
		if err != nil {
			t.Errorf("%s after the migration: %v", c.cmd, err)
		} else if out != c.before {
			t.Errorf("%s after the migration printed\n%s\nbefore\n%s", c.cmd, out, c.before)
		}
	}

	// Same layout again: nothing to do.
	_, errOut, err = run(t, "", "index", "migrate", "--data", data, "--layout", "10x28")
	if err != nil || !strings.Contains(errOut, "nothing to do") {
		t.Errorf("second migrate to 10x28: %v\n%s", err, errOut)
	}
	// The configured layout no longer matches: the crawl says how to go on.
	srv := httptest.NewServer(demosite.New())
	defer srv.Close()
	seeds := writeFile(t, t.TempDir(), "seeds.txt", srv.URL+"/\n")
	if _, _, err := run(t, "", "--seeds", seeds, "--data", data); err == nil || !strings.Contains(err.Error(), "contentseen.layout=10x28") {
		t.Errorf("crawl with layout 4x16 after the migration: err = %v, want a hint naming 10x28", err)
	}

	// The same site on another host: its syndicated copies and repost are
	// near-duplicates of pages stored before the migration (its exact
	// copies are caught by digest, not by the index).
	site2 := crawlDemoSite(t, data, "--set", "contentseen.layout=auto")
	checkNearDropsAcrossHosts(t, data, site1, site2)
	if st := readIndexState(t, data); st.layout != contentseen.Layout10x28 || !st.allStored {
		t.Errorf("after the next crawl: %+v", st)
	}
	// Back to the configured layout (4x16, the default): nothing to change.
	_, errOut, err = run(t, "", "index", "migrate", "--data", data, "--layout", "4x16")
	if err != nil || !strings.Contains(errOut, "the configured contentseen.layout (4x16) opens it: the next crawl needs no change") {
		t.Errorf("migrate back to 4x16: %v\n%s", err, errOut)
	}
}

// checkNearDropsAcrossHosts checks that site2's pages were dropped as near
// duplicates of the same pages of site1 as site1's own copies were.
func checkNearDropsAcrossHosts(t *testing.T, data, site1, site2 string) {
	t.Helper()
	near1, near2 := nearDrops(t, data, site1), nearDrops(t, data, site2)
	if len(near1) == 0 || slices.Contains(slices.Collect(maps.Values(near1)), "") {
		t.Fatalf("near-duplicate drops of the first host: %v; want some, each naming its page", near1)
	}
	if len(near2) != len(near1) {
		t.Errorf("second host: %d near-duplicate drops %v, want %d like the first host %v", len(near2), near2, len(near1), near1)
	}
	for u, of := range near1 {
		u2 := site2 + strings.TrimPrefix(u, site1)
		if got := near2[u2]; got != of {
			t.Errorf("%s: dropped as a near-duplicate of %q, want %s (stored before the migration)", u2, got, of)
		}
	}
}

// An interrupted migration (stopped just before its switch, when all of
// the new index is written) leaves the old index in use: stats, the next
// crawl with the old layout, and a later migration all work.
func TestIndexMigrateInterrupted(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	site1 := crawlDemoSite(t, data)
	before := readIndexState(t, data)
	stats, _, err := run(t, "", "stats", "--data", data)
	if err != nil {
		t.Fatal(err)
	}

	stop := errors.New("power cut")
	_, err = migrateIndex(context.Background(), data, "10x28", 3, 1e7, migrateHooks{beforeSwap: func() error { return stop }})
	if !errors.Is(err, stop) {
		t.Fatalf("migrateIndex = %v, want the hook's error", err)
	}
	st := readIndexState(t, data)
	if want := (indexState{layout: contentseen.Layout4x16, len: before.len, leftover: true, allStored: true}); st != want {
		t.Fatalf("after an interrupted migration: %+v, want %+v", st, want)
	}
	if out, _, err := run(t, "", "stats", "--data", data); err != nil || out != stats {
		t.Errorf("stats after an interrupted migration: %v\n%s\nbefore:\n%s", err, out, stats)
	}
	site2 := crawlDemoSite(t, data) // the default layout, 4x16: the old index
	checkNearDropsAcrossHosts(t, data, site1, site2)

	withSite2 := readIndexState(t, data)
	_, errOut, err := run(t, "", "index", "migrate", "--data", data, "--layout", "google16", "--set", "contentseen.k=3")
	if err != nil {
		t.Fatalf("index migrate after an interrupted one: %v\n%s", err, errOut)
	}
	st = readIndexState(t, data)
	if want := (indexState{layout: contentseen.LayoutGoogle16, len: withSite2.len, allStored: true}); st != want {
		t.Errorf("after migrating again: %+v, want %+v", st, want)
	}
}

func TestIndexMigrateRefuses(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	crawlDemoSite(t, data)
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no layout":      {[]string{"--data", data}, "--layout NAME is required"},
		"unknown layout": {[]string{"--data", data, "--layout", "3x21"}, "unknown layout"},
		"k too large":    {[]string{"--data", data, "--layout", "4x16", "--set", "contentseen.k=20"}, "answers k <= 19"},
		"no crawl":       {[]string{"--data", t.TempDir(), "--layout", "10x28"}, "no crawl data"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := run(t, "", append([]string{"index", "migrate"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("index migrate %v: err = %v, want %q", tc.args, err, tc.want)
			}
		})
	}
	if st := readIndexState(t, data); st.layout != contentseen.Layout4x16 || st.leftover {
		t.Errorf("refused migrations changed the index: %+v", st)
	}

	// A data directory in use by a crawl is refused with the crawl's message.
	c, err := crawler.Open(crawler.Options{DataDir: data, K: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _, err = run(t, "", "index", "migrate", "--data", data, "--layout", "10x28")
	if err == nil || !strings.Contains(err.Error(), "another crawl") {
		t.Errorf("index migrate on a busy data directory: err = %v, want 'another crawl'", err)
	}
}

// --layout auto chooses for the configured expected pages.
func TestIndexMigrateAuto(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	crawlDemoSite(t, data)
	_, errOut, err := run(t, "", "index", "migrate", "--data", data, "--layout", "auto", "--set", "contentseen.expected_pages=100000000", "--set", "contentseen.k=3")
	if err != nil {
		t.Fatalf("index migrate: %v\n%s", err, errOut)
	}
	if st := readIndexState(t, data); st.layout != contentseen.Layout10x28 || !st.allStored {
		t.Errorf("after migrating to auto for 100M pages: %+v, want layout 10x28", st)
	}
}

// kill -9 while a migration writes the new index: the data directory keeps
// a complete index (the old one, or the new one if the kill came after the
// switch), a crawl opens it, and a rerun of the migration finishes.
func TestIndexMigrateKillNine(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a crawl process")
	}
	ctx := context.Background()
	data := t.TempDir()
	path := filepath.Join(data, crawler.DBFile)
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.NoSync = true // the set-up only
	scheme := contentseen.Options{}.String()
	x, err := contentseen.NewBoltIndex(db, contentseen.BoltOptions{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	const n = 20_000
	ids, fps := make([]uint64, n), make([]contentseen.Fingerprint, n)
	for i := range n {
		ids[i], fps[i] = uint64(i+1), contentseen.Fingerprint(uint64(i+1)*0x9e3779b97f4a7c15)
	}
	if err := x.AddBatch(ctx, ids, fps); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(x.Close(), db.Close()); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}

	cmd, stderr := startCrawlProcess(t, "index", "migrate", "--data", data, "--layout", "google16", "--set", "contentseen.k=3")
	// Kill once the file grows (the new index is being written), or when
	// the process is done if it finishes first: either must leave a whole index.
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var waitErr error
poll:
	for {
		select {
		case waitErr = <-exited:
			break poll
		case <-time.After(2 * time.Millisecond):
		}
		if fi, err := os.Stat(path); err == nil && fi.Size() > st.Size() {
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			waitErr = <-exited
			break
		}
	}
	t.Logf("migration process: %v (%s)", waitErr, strings.TrimSpace(stderr.String()))

	check := func(wantLayouts ...string) {
		t.Helper()
		d, err := crawler.OpenData(data, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		layoutName, x := openDataIndex(t, d)
		defer x.Close()
		if !slices.Contains(wantLayouts, layoutName) {
			t.Fatalf("index layout %s, want one of %v", layoutName, wantLayouts)
		}
		if x.Len() != n {
			t.Errorf("index (%s) holds %d fingerprints, want %d", layoutName, x.Len(), n)
		}
		for i := 0; i < n; i += n / 100 {
			ms, err := x.Near(ctx, fps[i]^0b101, 3) // 2 bits away
			if err != nil || len(ms) != 1 || ms[0].ID != ids[i] {
				t.Errorf("index (%s): Near(fingerprint %d with 2 bits flipped) = %v, %v; want id %d", layoutName, i, ms, err, ids[i])
			}
		}
	}
	check(contentseen.Layout4x16, contentseen.LayoutGoogle16)
	c, err := crawler.Open(crawler.Options{DataDir: data, K: 3, Layout: crawler.LayoutAuto})
	if err != nil {
		t.Fatalf("crawler.Open after a killed migration: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, errOut, err := run(t, "", "index", "migrate", "--data", data, "--layout", "google16", "--set", "contentseen.k=3"); err != nil {
		t.Fatalf("migration after a killed one: %v\n%s", err, errOut)
	}
	check(contentseen.LayoutGoogle16)
}

// A data directory whose index is in an older storage format (simulated:
// format 2 recorded, its tables unreadable) is refused by the next crawl
// with a hint to migrate; migrate rebuilds it from the id records, in the
// same layout, and the crawl after it finds near-duplicates of the pages
// stored before.
func TestIndexMigrateOldFormat(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	site1 := crawlDemoSite(t, data)
	before := readIndexState(t, data)
	db, err := bolt.Open(filepath.Join(data, crawler.DBFile), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		top := tx.Bucket([]byte(indexBucket))
		if err := top.Bucket([]byte("meta")).Put([]byte("format"), []byte("2")); err != nil {
			return err
		}
		tables := top.Bucket([]byte("tables"))
		c := tables.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if err := tables.Put(k, []byte{0xff}); err != nil { // not format 3
				return err
			}
		}
		return nil
	})
	if cerr := db.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	srv := httptest.NewServer(demosite.New())
	defer srv.Close()
	seeds := writeFile(t, t.TempDir(), "seeds.txt", srv.URL+"/\n")
	if _, _, err := run(t, "", "--seeds", seeds, "--data", data); err == nil || !strings.Contains(err.Error(), "crawl index migrate") {
		t.Fatalf("crawl on a format 2 index: err = %v, want a hint to migrate", err)
	}
	if _, errOut, err := run(t, "", "index", "migrate", "--data", data, "--layout", "4x16"); err != nil {
		t.Fatalf("index migrate: %v\n%s", err, errOut)
	}
	if after := readIndexState(t, data); after != before {
		t.Errorf("after rebuilding: %+v, want %+v", after, before)
	}
	site2 := crawlDemoSite(t, data)
	checkNearDropsAcrossHosts(t, data, site1, site2)
}

// openDataIndex opens the index of an opened data directory, read-only,
// with the layout and scheme it records, and returns the layout's name.
func openDataIndex(t *testing.T, d *crawler.Data) (string, *contentseen.BoltIndex) {
	t.Helper()
	var name, scheme string
	if err := d.DB.View(func(tx *bolt.Tx) error {
		name, scheme, _ = contentseen.ReadBoltMeta(tx, "")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	layout, err := contentseen.LayoutByName(name)
	if err != nil {
		t.Fatal(err)
	}
	x, err := contentseen.NewBoltIndex(d.DB, contentseen.BoltOptions{Layout: layout, Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return name, x
}
