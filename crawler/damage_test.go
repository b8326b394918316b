package crawler

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/internal/demosite"
	"github.com/simcrawl/simcrawl/storage"
)

// demoCrawl is one crawl of the demo site, made once per test binary; tests
// damage copies of its directory.
var demoCrawl struct {
	once sync.Once
	dir  string
	url  string
	err  error
}

// crawledDir returns options whose DataDir is a fresh copy of a finished
// demo crawl's directory (DropLog is the copy's drop log).
func crawledDir(t *testing.T) Options {
	t.Helper()
	demoCrawl.once.Do(func() {
		// The server stays up for resumes; the test binary's exit ends it.
		srv := httptest.NewServer(demosite.New())
		demoCrawl.url = srv.URL
		dir, err := os.MkdirTemp("", "simcrawl-damage")
		if err != nil {
			demoCrawl.err = err
			return
		}
		opts := testOptions(t, srv.URL+"/")
		opts.DataDir = dir
		c, err := Open(opts)
		if err != nil {
			demoCrawl.err = err
			return
		}
		_, err = c.Run(context.Background())
		demoCrawl.err = errors.Join(err, c.Close())
		demoCrawl.dir = dir
	})
	if demoCrawl.err != nil {
		t.Fatal(demoCrawl.err)
	}
	opts := testOptions(t, demoCrawl.url+"/")
	for _, name := range []string{DBFile, "dropped.jsonl"} {
		b, err := os.ReadFile(filepath.Join(demoCrawl.dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(opts.DataDir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	opts.DropLog = filepath.Join(opts.DataDir, "dropped.jsonl")
	return opts
}

func fileHash(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// wantDamage checks err is a DamageError naming file and saying what to do.
func wantDamage(t *testing.T, what string, err error, file string) {
	t.Helper()
	if !errors.Is(err, ErrDamaged) {
		t.Fatalf("%s: err = %v, want ErrDamaged", what, err)
	}
	for _, s := range []string{file, "crawl check", "crawl repair"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%s: error %q does not mention %q", what, err, s)
		}
	}
}

// Finding 1: a crawl.db cut in half made `crawl stats` and a resume panic
// inside bbolt.
func TestHalfFileIsDamageNotPanic(t *testing.T) {
	opts := crawledDir(t)
	db := filepath.Join(opts.DataDir, DBFile)
	st, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(db, st.Size()/2); err != nil {
		t.Fatal(err)
	}
	before := fileHash(t, db)
	_, err = OpenData(opts.DataDir, 0)
	wantDamage(t, "OpenData", err, db)
	if !strings.Contains(err.Error(), "cut short") {
		t.Errorf("OpenData: %v does not say the file is cut short", err)
	}
	_, err = Open(opts)
	wantDamage(t, "Open (resume)", err, db)
	if fileHash(t, db) != before {
		t.Error("the damaged file was written to")
	}
}

// Finding 2: 2,000 random bytes flipped past the first 8 KiB made reads
// panic, and a resume wrote to the file before failing.
func TestFlippedBytesAreDamageNotPanic(t *testing.T) {
	opts := crawledDir(t)
	db := filepath.Join(opts.DataDir, DBFile)
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(2, 2000))
	for range 2000 {
		b[8192+r.IntN(len(b)-8192)] ^= byte(1 + r.IntN(255))
	}
	if err := os.WriteFile(db, b, 0o600); err != nil {
		t.Fatal(err)
	}
	before := fileHash(t, db)
	_, err = OpenData(opts.DataDir, 0)
	wantDamage(t, "OpenData", err, db)
	_, err = Open(opts)
	wantDamage(t, "Open (resume)", err, db)
	rep, err := CheckData(context.Background(), opts.DataDir, "", 0)
	if err != nil || rep.OK() {
		t.Errorf("CheckData: %v, OK %v; want damage reported", err, rep != nil && rep.OK())
	}
	if fileHash(t, db) != before {
		t.Error("the damaged file was written to")
	}
}

// Finding 3: a missing or empty crawl.db beside a drop log made the next
// crawl empty the log and start again.
func TestLostStoreIsRefused(t *testing.T) {
	for _, how := range []string{"missing", "empty"} {
		t.Run(how, func(t *testing.T) {
			opts := crawledDir(t)
			db := filepath.Join(opts.DataDir, DBFile)
			if err := os.Remove(db); err != nil {
				t.Fatal(err)
			}
			if how == "empty" {
				if err := os.WriteFile(db, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			logBefore := fileHash(t, opts.DropLog)
			_, err := Open(opts)
			if !errors.Is(err, ErrLostStore) {
				t.Fatalf("Open: err = %v, want ErrLostStore", err)
			}
			if !strings.Contains(err.Error(), how) || !strings.Contains(err.Error(), "dropped.jsonl") {
				t.Errorf("Open: %q does not say the store is %s beside the drop log", err, how)
			}
			if fileHash(t, opts.DropLog) != logBefore {
				t.Error("the drop log was changed")
			}
			if _, err := os.Stat(db); (how == "missing") != errors.Is(err, os.ErrNotExist) {
				t.Errorf("crawl.db: stat %v after a refused open", err)
			}
		})
	}
}

func readLog(t *testing.T, path string) []storage.DropRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []storage.DropRecord
	if err := storage.ReadDropLog(f, func(r storage.DropRecord) error { recs = append(recs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	return recs
}

// Finding 4: the drop log was matched to the store by line count, so
// deleted lines, a garbage line and a cut last line gave drops logged twice,
// drops missing and the garbage kept.
func TestDropLogMatchedLineByLine(t *testing.T) {
	orig := readLog(t, crawledDir(t).DropLog)
	if len(orig) < 4 {
		t.Fatalf("the demo crawl logged %d drops, want 4 or more", len(orig))
	}
	lines := func(path string) []string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return strings.SplitAfter(string(b), "\n")
	}
	t.Run("damaged log is refused and kept", func(t *testing.T) {
		opts := crawledDir(t)
		ls := lines(opts.DropLog)
		// Delete line 2, add a garbage line, cut the last line.
		n := len(ls) - 1 // the last element is "" after the final newline
		last := ls[n-1]
		damaged := append(append([]string{ls[0]}, ls[2:n-1]...), "garbage\n", last[:len(last)/2])
		if err := os.WriteFile(opts.DropLog, []byte(strings.Join(damaged, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		before := fileHash(t, opts.DropLog)
		dbPath := filepath.Join(opts.DataDir, DBFile)
		dbBefore := fileHash(t, dbPath)
		_, err := Open(opts)
		if !errors.Is(err, ErrDropLogMismatch) || errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "line 2") {
			t.Fatalf("Open: err = %v, want ErrDropLogMismatch (not ErrDamaged: crawl.db is sound) naming the drop log's line 2", err)
		}
		// The commands it suggests can be run as printed.
		if want := "`crawl check --data " + opts.DataDir + "`"; !strings.Contains(err.Error(), want) {
			t.Errorf("Open: err = %v, want it to suggest %s", err, want)
		}
		if fileHash(t, opts.DropLog) != before {
			t.Error("the damaged drop log was changed")
		}
		// "nothing was changed": crawl.db neither (no transaction is
		// committed before the drop log is checked).
		if fileHash(t, dbPath) != dbBefore {
			t.Error("crawl.db was written to before the drop log was found to disagree")
		}
		// crawl check says the same: the drop log, not crawl.db.
		rep, err := CheckData(context.Background(), opts.DataDir, opts.DropLog, 0)
		if err != nil {
			t.Fatal(err)
		}
		err = rep.Err()
		if !errors.Is(err, ErrDropLogMismatch) || errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("CheckReport.Err = %v, want ErrDropLogMismatch naming line 2", err)
		}
		for _, a := range rep.Areas {
			if len(a.Problems) > 0 && a.Name != logArea {
				t.Errorf("area %s has problems %q; only the drop log is wrong", a.Name, a.Problems)
			}
		}
	})
	t.Run("crash tail is appended", func(t *testing.T) {
		opts := crawledDir(t)
		ls := lines(opts.DropLog)
		n := len(ls) - 1
		cut := strings.Join(ls[:n-3], "") + ls[n-3][:10]
		if err := os.WriteFile(opts.DropLog, []byte(cut), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := Open(opts)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		got := readLog(t, opts.DropLog)
		if len(got) != len(orig) {
			t.Fatalf("after the repair the log has %d lines, want %d", len(got), len(orig))
		}
		for i := range got {
			if got[i].URL != orig[i].URL || got[i].Fingerprint != orig[i].Fingerprint || got[i].DuplicateOf != orig[i].DuplicateOf {
				t.Errorf("line %d: %s %016x, want %s %016x", i+1, got[i].URL, got[i].Fingerprint, orig[i].URL, orig[i].Fingerprint)
			}
		}
	})
}

// A finished crawl checks clean: no false alarms.
func TestCheckCleanCrawl(t *testing.T) {
	opts := crawledDir(t)
	rep, err := CheckData(context.Background(), opts.DataDir, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range rep.Areas {
		if len(a.Problems) > 0 {
			t.Errorf("%s: %v", a.Name, a.Problems)
		}
	}
}

// Repair of a sound crawl copies everything: the same pages, drops, drop
// log and frontier, and the copy resumes.
func TestRepairSoundCrawlRoundTrip(t *testing.T) {
	opts := crawledDir(t)
	out := filepath.Join(t.TempDir(), "repaired")
	before := fileHash(t, filepath.Join(opts.DataDir, DBFile))
	sum, err := Repair(context.Background(), opts.DataDir, out, contentseen.DefaultLayout(), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := sum.Check.Err(); err != nil {
		t.Fatalf("the repaired directory: %v", err)
	}
	if fileHash(t, filepath.Join(opts.DataDir, DBFile)) != before {
		t.Error("repair wrote to the source")
	}
	if len(sum.Damage) > 0 || sum.PagesLost > 0 || sum.DropsLost > 0 || sum.Frontier.Lost > 0 {
		t.Errorf("a sound crawl lost something: %+v", sum)
	}
	want, got := readResult(t, opts.DataDir, ""), readResult(t, out, "")
	if len(got.stored) != len(want.stored) || len(got.dropped) != len(want.dropped) || len(got.log) != len(want.log) {
		t.Errorf("repaired: %d pages, %d drops, %d log lines; want %d, %d, %d",
			len(got.stored), len(got.dropped), len(got.log), len(want.stored), len(want.dropped), len(want.log))
	}
	for u, p := range want.stored {
		if q := got.stored[u]; q == nil || q.ID != p.ID || q.Fingerprint != p.Fingerprint || q.Text != p.Text {
			t.Errorf("page %s not copied as it was", u)
		}
	}
	sketches := func(dir string) (n int, all string) {
		d, err := OpenData(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		var ids []uint64
		for _, p := range want.stored {
			ids = append(ids, p.ID)
		}
		slices.Sort(ids)
		err = d.DB.View(func(tx *bolt.Tx) error {
			for _, id := range ids {
				if sk, ok := d.Store.SketchTx(tx, id); ok {
					n++
					all += fmt.Sprintf("%d:%x ", id, sk)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return n, all
	}
	if n, a := sketches(opts.DataDir); n == 0 {
		t.Log("the crawl stored no sketches")
	} else if m, b := sketches(out); a != b {
		t.Errorf("sketches: %d copied of %d, or changed", m, n)
	}
	for i := range min(len(got.log), len(want.log)) {
		if got.log[i].URL != want.log[i].URL || got.log[i].DuplicateOf != want.log[i].DuplicateOf {
			t.Errorf("drop log line %d: %s of %s, want %s of %s", i+1, got.log[i].URL, got.log[i].DuplicateOf, want.log[i].URL, want.log[i].DuplicateOf)
		}
	}
	wd, _ := OpenData(opts.DataDir, 0)
	ws, _ := wd.FrontierStats()
	wd.Close()
	gd, err := OpenData(out, 0)
	if err != nil {
		t.Fatal(err)
	}
	gs, _ := gd.FrontierStats()
	k, ok, _ := gd.K()
	gd.Close()
	if gs != ws || !ok || k != opts.K {
		t.Errorf("frontier %+v, k %d %v; want %+v, k %d", gs, k, ok, ws, opts.K)
	}
	// The copy resumes: a rerun of the finished crawl fetches nothing new.
	opts.DataDir, opts.DropLog = out, ""
	if sum := runCrawl(t, opts); sum.Run.Fetched != 0 {
		t.Errorf("the resumed copy fetched %d pages, want 0", sum.Run.Fetched)
	}
}

// TestMain removes the shared demo crawl that crawledDir made.
func TestMain(m *testing.M) {
	code := m.Run()
	if demoCrawl.dir != "" {
		os.RemoveAll(demoCrawl.dir)
	}
	os.Exit(code)
}

// A URL the frontier holds as done whose page (or drop) did not survive
// is queued again by repair: the next crawl fetches it, instead of
// skipping it as done forever (a new user's repaired crawl fetched nothing
// and lost its pages without a word).
func TestRepairRequeuesLostPages(t *testing.T) {
	opts := crawledDir(t)
	want := readResult(t, opts.DataDir, "")
	db, err := bolt.Open(filepath.Join(opts.DataDir, DBFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The store loses every page and drop (its bucket), the frontier keeps
	// their URLs as done.
	err = db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket([]byte("pages")) })
	if err := errors.Join(err, db.Close()); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "repaired")
	sum, err := Repair(context.Background(), opts.DataDir, out, contentseen.DefaultLayout(), "")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(want.stored) + len(want.dropped); sum.Frontier.Requeued < n {
		t.Errorf("repair queued %d URLs again, want at least the %d stored or dropped", sum.Frontier.Requeued, n)
	}
	opts.DataDir, opts.DropLog = out, filepath.Join(out, "dropped.jsonl")
	c, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Run(context.Background())
	if err := errors.Join(err, c.Close()); err != nil {
		t.Fatal(err)
	}
	// The URLs come back at depth 0, so the order differs and another page
	// of a cluster may be the one kept: every URL stored or dropped before
	// is stored or dropped again.
	got := readResult(t, out, "")
	judged := func(u string) bool { return got.stored[u] != nil || got.dropped[u] != nil }
	for u := range want.stored {
		if !judged(u) {
			t.Errorf("%s was stored before repair; after it and a resume it is neither stored nor dropped", u)
		}
	}
	for u := range want.dropped {
		if !judged(u) {
			t.Errorf("%s was dropped before repair; after it and a resume it is neither stored nor dropped", u)
		}
	}
}

// A file sound in structure whose content disagrees (a page record gone
// while its drops and index entry remain) is refused by a resume, which
// checks it on the database it opened for writing and writes nothing, and
// by OpenWritable.
func TestOpenRefusesContentDamageUnwritten(t *testing.T) {
	opts := crawledDir(t)
	path := filepath.Join(opts.DataDir, DBFile)
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket([]byte("pages")).Bucket([]byte("meta"))
		k, _ := meta.Cursor().First()
		if k == nil {
			return errors.New("no page stored")
		}
		return meta.Delete(k)
	})
	if err := errors.Join(err, db.Close()); err != nil {
		t.Fatal(err)
	}
	before := fileHash(t, path)
	_, err = Open(opts)
	wantDamage(t, "Open (resume)", err, path)
	_, err = OpenWritable(opts.DataDir, 0)
	wantDamage(t, "OpenWritable", err, path)
	if fileHash(t, path) != before {
		t.Error("the damaged file was written to")
	}
	// The lock was released: a reader opens it.
	d, err := OpenData(opts.DataDir, 0)
	if err != nil {
		t.Fatalf("OpenData after the refused opens: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}

// A page's raw body and a drop's kept text are zstd frames of their own:
// one can be damaged in a file whose structure and records are sound. A
// crawl reads neither back, but export and dups show do, and send the
// user to crawl check: it names them, and repair keeps the page and the
// drop without them instead of losing both.
func TestDamagedBodyAndDropText(t *testing.T) {
	opts := crawledDir(t)
	want := readResult(t, opts.DataDir, "")
	path := filepath.Join(opts.DataDir, DBFile)
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	garbage := []byte("not a zstd frame")
	err = db.Update(func(tx *bolt.Tx) error {
		top := tx.Bucket([]byte("pages"))
		if err := top.Bucket([]byte("body")).Put(binary.BigEndian.AppendUint64(nil, 2), garbage); err != nil {
			return err
		}
		return top.Bucket([]byte("droptext")).Put(binary.BigEndian.AppendUint64(nil, 1), garbage)
	})
	if err := errors.Join(err, db.Close()); err != nil {
		t.Fatal(err)
	}
	rep, err := CheckData(context.Background(), opts.DataDir, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	problems := map[string][]string{}
	for _, a := range rep.Areas {
		problems[a.Name] = a.Problems
	}
	if p := problems[bodiesArea]; len(p) != 2 || !strings.Contains(p[0], "body of page 2") || !strings.Contains(p[1], "text of drop 1") {
		t.Errorf("check: %s problems %q, want the body of page 2 and the text of drop 1", bodiesArea, p)
	}
	for name, p := range problems {
		if name != bodiesArea && len(p) > 0 {
			t.Errorf("check: area %s has problems %q; only the bodies are damaged", name, p)
		}
	}
	if err := rep.Err(); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), bodiesArea+":") {
		t.Errorf("check: err = %v, want ErrDamaged naming the %s", err, bodiesArea)
	}
	// The crawl's own open does not decode bodies: it never reads them.
	if db, err := OpenWritable(opts.DataDir, 0); err != nil {
		t.Errorf("OpenWritable: %v, want the directory opened", err)
	} else if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(t.TempDir(), "repaired")
	sum, err := Repair(context.Background(), opts.DataDir, out, contentseen.DefaultLayout(), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := sum.Check.Err(); err != nil {
		t.Fatalf("the repaired directory: %v", err)
	}
	if sum.PagesLost != 0 || sum.DropsLost != 0 || sum.BodiesLost != 1 || sum.DropTextsLost != 1 {
		t.Errorf("repair: %d pages lost, %d drops lost, %d bodies lost, %d drop texts lost; want 0, 0, 1, 1",
			sum.PagesLost, sum.DropsLost, sum.BodiesLost, sum.DropTextsLost)
	}
	if got := readResult(t, out, ""); len(got.stored) != len(want.stored) || len(got.dropped) != len(want.dropped) {
		t.Errorf("repaired: %d pages, %d drops; want %d, %d", len(got.stored), len(got.dropped), len(want.stored), len(want.dropped))
	}
}
