package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/storage"
	"github.com/simcrawl/simcrawl/warc"
)

// splitCrawl builds what a distributed crawl of splitCorpus leaves: one
// data directory per worker, each holding the pages its worker stored and
// the drops it recorded, where a copy of a page the other worker stored is
// a drop naming that page by URL (storage.Drop.DuplicateOfURL) — and the
// same corpus crawled whole into one directory, the answer every reading
// command of the workers' directories must give. Each worker's own part is
// a real `crawl dedup`; the drops of pages on the other worker are those
// the whole crawl recorded, written into the worker's store and drop log
// as a worker of a distributed crawl writes them (the shared index having
// found the page on the other worker).
func splitCrawl(t *testing.T) (whole string, workers []string) {
	t.Helper()
	recs := splitCorpus()
	whole = dedupInto(t, "whole", recs)
	storedBy := map[string]int{} // article text -> the worker storing it
	for _, r := range recs {
		if !strings.Contains(r.Title, "(copy)") && r.Text != "" {
			storedBy[r.Title] = r.worker
		}
	}
	var foreign [2][]string // URLs of the copies of the other worker's pages
	for w := range 2 {
		var own []crawlRecord
		for _, r := range recs {
			switch {
			case r.worker != w:
			case strings.HasSuffix(r.Title, " (copy)") && storedBy[strings.TrimSuffix(r.Title, " (copy)")] != w:
				foreign[w] = append(foreign[w], r.URL)
			default:
				own = append(own, r)
			}
		}
		workers = append(workers, dedupInto(t, []string{"worker-a", "worker-b"}[w], own))
	}
	wd, err := crawler.OpenData(whole, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer wd.Close()
	ctx := context.Background()
	for w, urls := range foreign {
		for _, u := range urls {
			d, err := wd.Store.DropByURL(ctx, u)
			if err != nil {
				t.Fatalf("the whole crawl did not drop %s: %v", u, err)
			}
			kept, err := wd.Store.Get(ctx, d.DuplicateOf)
			if err != nil {
				t.Fatal(err)
			}
			addForeignDrop(t, workers[w], d, kept.URL)
		}
	}
	if len(foreign[0]) == 0 || len(foreign[1]) == 0 {
		t.Fatalf("splitCorpus gives worker copies of the other's pages %v; want some each way", foreign)
	}
	return whole, workers
}

// addForeignDrop records d in data directory dir as a drop of the page
// another worker stored under keptURL, in the store and the drop log.
func addForeignDrop(t *testing.T, dir string, d *storage.Drop, keptURL string) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, crawler.DBFile), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	st, err := storage.New(db, storage.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	c := *d
	c.ID, c.DuplicateOf, c.DuplicateOfURL = 0, 0, keptURL
	if err := db.Update(func(tx *bolt.Tx) error { return st.PutDropTx(tx, &c) }); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	log, err := storage.OpenDropLog(filepath.Join(dir, "dropped.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := log.Write(storage.NewDropRecord(&c, keptURL)); err != nil {
		t.Fatal(err)
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
}

// dataFlags is --data DIR for each dir.
func dataFlags(dirs ...string) []string {
	var args []string
	for _, d := range dirs {
		args = append(args, "--data", d)
	}
	return args
}

// mustRun runs the program and fails the test on an error.
func mustRun(t *testing.T, args ...string) (out, errOut string) {
	t.Helper()
	out, errOut, err := run(t, "", args...)
	if err != nil {
		t.Fatalf("crawl %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	return out, errOut
}

// dirHashes hashes every file of the data directories.
func dirHashes(t *testing.T, dirs ...string) map[string][32]byte {
	t.Helper()
	h := map[string][32]byte{}
	for _, d := range dirs {
		for _, name := range []string{crawler.DBFile, "dropped.jsonl"} {
			h[filepath.Join(d, name)] = hashFile(t, filepath.Join(d, name))
		}
	}
	return h
}

// TestSeveralDataDirsReadAsOneCrawl checks that export, dups, stats and
// failed over the workers' directories show what they show of the same
// crawl in one directory, and write nothing.
func TestSeveralDataDirsReadAsOneCrawl(t *testing.T) {
	whole, workers := splitCrawl(t)
	before := dirHashes(t, workers...)
	both := dataFlags(workers...)

	t.Run("export", func(t *testing.T) {
		want := exportedRecords(t, whole)
		out, errOut := mustRun(t, append([]string{"export"}, both...)...)
		got := map[string]storage.ExportRecord{}
		ids := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var r storage.ExportRecord
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("export line %q: %v", line, err)
			}
			key := fmt.Sprintf("%s#%d", r.Data, r.ID)
			if !slices.Contains(workers, r.Data) || ids[key] {
				t.Errorf("record %s: data %q id %d: want a worker's directory, and (data, id) unique", r.URL, r.Data, r.ID)
			}
			ids[key] = true
			got[r.URL] = r
		}
		if len(got) != len(want) {
			t.Errorf("exported %d pages of the workers, want the whole crawl's %d", len(got), len(want))
		}
		for u, w := range want {
			g := got[u]
			if g.Text != w.Text || g.Fingerprint != w.Fingerprint || g.Title != w.Title || g.FetchedAt != w.FetchedAt {
				t.Errorf("export of %s = %+v, want the whole crawl's %+v", u, g, w)
			}
		}
		if !strings.Contains(errOut, "exported 6 pages from 2 data directories ("+workers[0]+" 3, "+workers[1]+" 3)") {
			t.Errorf("export said %q, want the count per directory", errOut)
		}
	})

	t.Run("export warc", func(t *testing.T) {
		want := exportedRecords(t, whole)
		got := warcPages(t, both...)
		if len(got) != len(want) {
			t.Errorf("WARC of the workers holds %d pages, want the whole crawl's %d", len(got), len(want))
		}
		seen := map[string]bool{}
		for u, m := range got {
			key := m.Get(warcFieldData) + "#" + m.Get(warcFieldPageID)
			if !slices.Contains(workers, m.Get(warcFieldData)) || seen[key] {
				t.Errorf("%s: %s %q, %s %s: want a worker's directory, and the pair unique", u, warcFieldData, m.Get(warcFieldData), warcFieldPageID, m.Get(warcFieldPageID))
			}
			seen[key] = true
			if w, ok := want[u]; !ok || m.Get(warcFieldFingerprint) != w.Fingerprint {
				t.Errorf("%s: fingerprint %s, want the whole crawl's page %+v", u, m.Get(warcFieldFingerprint), w)
			}
		}
		for u, m := range warcPages(t, "--data", workers[0]) {
			if m.Get(warcFieldData) != "" {
				t.Errorf("WARC of one directory: %s has %s %q, want none", u, warcFieldData, m.Get(warcFieldData))
			}
		}
	})

	t.Run("dups", func(t *testing.T) {
		wantOut, _ := mustRun(t, "dups", "--json", "--data", whole)
		want := groupURLs(decodeGroups(t, wantOut))
		out, errOut := mustRun(t, append([]string{"dups", "--json"}, both...)...)
		gs := decodeGroups(t, out)
		if got := groupURLs(gs); !equalGroups(got, want) {
			t.Errorf("dups of the workers:\n%v\nwant the whole crawl's:\n%v", got, want)
		}
		for _, g := range gs {
			if g.ID == 0 || !slices.Contains(workers, g.Data) || g.Fingerprint == "" {
				t.Errorf("group %s: id %d, data %q: every drop's page must be found in a worker's directory", g.URL, g.ID, g.Data)
			}
			for _, d := range g.Drops {
				if !slices.Contains(workers, d.Data) {
					t.Errorf("drop %s: data %q, want a worker's directory", d.URL, d.Data)
				}
			}
		}
		if errOut != "" {
			t.Errorf("dups of both workers warned %q", errOut)
		}
		text, _ := mustRun(t, append([]string{"dups"}, both...)...)
		for _, s := range []string{"(page 1 in " + workers[0] + ", 2 drops)", "Read as one crawl: " + workers[0] + ", " + workers[1] + ".",
			"Explain one: crawl dups show --data " + workers[0] + " --data " + workers[1] + " URL"} {
			if !strings.Contains(text, s) {
				t.Errorf("dups of both workers lacks %q:\n%s", s, text)
			}
		}
	})

	t.Run("dups show", func(t *testing.T) {
		const u = "http://mirror.example/article-1" // worker-b's drop of a page worker-a stored
		want, _ := mustRun(t, "dups", "show", "--data", whole, u)
		out, _ := mustRun(t, append([]string{"dups", "show", u}, both...)...)
		first, rest, _ := strings.Cut(out, "\n")
		if wantFirst := "Data:         dropped in " + workers[1] + ", the stored page in " + workers[0]; first != wantFirst {
			t.Errorf("dups show begins %q, want %q", first, wantFirst)
		}
		if rest != want {
			t.Errorf("dups show over the workers:\n%s\nwant the whole crawl's:\n%s", rest, want)
		}
	})

	t.Run("stats", func(t *testing.T) {
		var want, got statsJSON
		wantOut, _ := mustRun(t, "stats", "--json", "--data", whole)
		out, _ := mustRun(t, append([]string{"stats", "--json"}, both...)...)
		if err := json.Unmarshal([]byte(wantOut), &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		if len(got.DataDirs) != 2 || got.DataDirs[0].Data != workers[0] || got.DataDirs[1].Data != workers[1] {
			t.Fatalf("stats data_dirs = %+v, want the two workers'", got.DataDirs)
		}
		var stored, dropped, skipped int
		for _, d := range got.DataDirs {
			stored, dropped, skipped = stored+d.Stored, dropped+d.DroppedExact+d.DroppedNear, skipped+d.Skipped
		}
		if stored != got.Stored || dropped != got.DroppedExact+got.DroppedNear || skipped != got.Skipped {
			t.Errorf("stats totals %d stored, %d dropped, %d skipped are not the sums of data_dirs %+v", got.Stored, got.DroppedExact+got.DroppedNear, got.Skipped, got.DataDirs)
		}
		got.DataDirs = nil
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		if string(gj) != string(wj) {
			t.Errorf("stats of the workers:\n%s\nwant the whole crawl's:\n%s", gj, wj)
		}
		text, _ := mustRun(t, append([]string{"stats"}, both...)...)
		if !strings.HasPrefix(text, "Data     2 directories, read as one crawl:\n  "+workers[0]) {
			t.Errorf("stats does not begin with the directories it read:\n%s", text)
		}
	})

	t.Run("failed", func(t *testing.T) {
		out, _ := mustRun(t, append([]string{"failed", "--skipped", "--json"}, both...)...)
		want := `{"url":"http://news.example/blob-0","reason":"non-html","data":"` + workers[0] + `"}` + "\n" +
			`{"url":"http://news.example/blob-1","reason":"non-html","data":"` + workers[1] + `"}` + "\n"
		if out != want {
			t.Errorf("failed --skipped --json over the workers =\n%s\nwant\n%s", out, want)
		}
		_, errOut := mustRun(t, append([]string{"failed"}, both...)...)
		if want := "no failed URLs\nRead as one crawl: " + workers[0] + ", " + workers[1] + ".\n"; errOut != want {
			t.Errorf("failed over the workers said %q, want %q", errOut, want)
		}
	})

	for path, h := range dirHashes(t, workers...) {
		if before[path] != h {
			t.Errorf("%s changed: reading commands must not write", path)
		}
	}
}

// exportedRecords returns the JSONL export of data by URL.
func exportedRecords(t *testing.T, data string) map[string]storage.ExportRecord {
	t.Helper()
	out, _ := mustRun(t, "export", "--data", data)
	recs := map[string]storage.ExportRecord{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r storage.ExportRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("export line %q: %v", line, err)
		}
		recs[r.URL] = r
	}
	return recs
}

// groupURLs maps each group's page URL to its drops' URLs, sorted.
func groupURLs(gs []dupGroupJSON) map[string][]string {
	m := map[string][]string{}
	for _, g := range gs {
		for _, d := range g.Drops {
			m[g.URL] = append(m[g.URL], d.URL)
		}
		slices.Sort(m[g.URL])
	}
	return m
}

func equalGroups(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// warcPages runs `crawl export --format warc` with args and returns the
// fields of each page's metadata record by URL.
func warcPages(t *testing.T, args ...string) map[string]warc.Header {
	t.Helper()
	file := filepath.Join(t.TempDir(), "out.warc.gz")
	mustRun(t, append([]string{"export", "--format", "warc", "--out", file}, args...)...)
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := warc.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]warc.Header{}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return pages
		}
		if err != nil {
			t.Fatalf("read back: %v", err)
		}
		if rec.Type() != warc.TypeMetadata {
			continue
		}
		b, err := io.ReadAll(rec.Block)
		if err != nil {
			t.Fatal(err)
		}
		fields := warc.ParseFields(b)
		pages[fields.Get(warcFieldURL)] = fields
	}
}
