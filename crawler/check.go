package crawler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/internal/boltcheck"
	"github.com/simcrawl/simcrawl/storage"
)

// CheckReport is what CheckData found in a data directory: one Area per
// part, in the order checked. A plain value.
type CheckReport struct {
	Dir     string
	DropLog string
	Areas   []CheckArea
}

// CheckArea is one part of a data directory and what is wrong with it.
type CheckArea struct {
	Name     string   // "file", "bbolt", "pages", "index", "drops", "frontier", "drop log"
	Summary  string   // what was read, e.g. "42 pages"
	Problems []string // empty when sound
	Notes    []string // not problems: what the next crawl will do by itself
}

// OK reports whether no area has a problem.
func (r *CheckReport) OK() bool {
	for _, a := range r.Areas {
		if len(a.Problems) > 0 {
			return false
		}
	}
	return true
}

// Err is nil when OK. Else it names the first problem: a DamageError for
// crawl.db, or, when only the drop log disagrees with the store, an error
// wrapping ErrDropLogMismatch, as the crawl's own open gives (the store is
// sound; the log is the one to move away or rewrite).
func (r *CheckReport) Err() error {
	for _, a := range r.Areas {
		if len(a.Problems) > 0 {
			what := a.Name + ": " + a.Problems[0]
			if n := r.problems(); n > 1 {
				what += fmt.Sprintf(" (and %d more problem%s)", n-1, plural(n-1))
			}
			if a.Name == logArea {
				return dropLogMismatch(r.Dir, r.DropLog, what)
			}
			return &DamageError{Dir: r.Dir, File: filepath.Join(r.Dir, DBFile), What: what}
		}
	}
	return nil
}

func (r *CheckReport) problems() int {
	n := 0
	for _, a := range r.Areas {
		n += len(a.Problems)
	}
	return n
}

func (r *CheckReport) area(name string) *CheckArea {
	r.Areas = append(r.Areas, CheckArea{Name: name})
	return &r.Areas[len(r.Areas)-1]
}

// CheckData checks data directory dir read-only: the bbolt file's page
// structure (boltcheck) and bbolt's own consistency check, then, if those
// pass, every page record and text decodes, the ContentSeen index holds
// exactly the stored non-thin pages (id and fingerprint, and each is found
// in the index's tables), every drop decodes and names a stored page, the
// frontier's states, queues and counts agree (frontier.CheckTx), and the
// drop log at dropLog ("" = dir/dropped.jsonl) lists the store's drops in
// order. It fails with ErrLocked while a crawl runs on dir; other errors
// are what it could not read, the damage is in the report. Cost: one read
// of the whole file plus one index look-up per page.
func CheckData(ctx context.Context, dir, dropLog string, timeout time.Duration) (*CheckReport, error) {
	if dropLog == "" {
		dropLog = filepath.Join(dir, "dropped.jsonl")
	}
	if timeout <= 0 {
		timeout = time.Second
	}
	rep := &CheckReport{Dir: dir, DropLog: dropLog}
	file := rep.area("file")
	path := filepath.Join(dir, DBFile)
	st, err := os.Stat(path)
	if err != nil {
		file.Problems = append(file.Problems, fmt.Sprintf("%s: %v", path, err))
		if lines, _ := countLines(dropLog); lines > 0 {
			file.Problems = append(file.Problems, fmt.Sprintf("the drop log %s has %d lines: the store of this crawl is lost", dropLog, lines))
		}
		return rep, nil
	}
	file.Summary = fmt.Sprintf("%s, %d bytes", path, st.Size())
	db, walk, err := openDB(dir, true, timeout)
	var de *DamageError
	if errors.As(err, &de) {
		file.Problems = append(file.Problems, structureProblems(walk, de.What)...)
		if lines, _ := countLines(dropLog); st.Size() == 0 && lines > 0 {
			file.Problems = append(file.Problems, fmt.Sprintf("the drop log %s has %d lines: the store of this crawl is lost", dropLog, lines))
		}
		return rep, nil
	}
	if err != nil {
		return nil, err
	}
	defer db.Close()
	file.Summary += fmt.Sprintf(", %d pages of %d bytes, %d buckets, %d keys, transaction %d", walk.HighWater, walk.PageSize, walk.Buckets, walk.Keys, walk.Txid)
	rep.area("bbolt").Summary = "structure and bbolt's consistency check passed"
	err = guard(dir, func() error { return checkContent(ctx, db, dir, dropLog, true, rep) })
	if errors.As(err, &de) {
		a := rep.area("read")
		a.Problems = append(a.Problems, de.What)
		return rep, nil
	}
	return rep, err
}

// pageFP is a stored page's fingerprint, for matching the index.
type pageFP struct {
	id   uint64
	fp   uint64
	thin bool
}

// indexed reports whether the crawl indexes the page: not thin, and
// fingerprinted (a crawl with ContentSeen off stores fingerprint 0).
func (p pageFP) indexed() bool { return !p.thin && p.fp != 0 }

// logArea names the drop log's CheckArea.
const logArea = "drop log"

// checkContent checks what the data means, on a file whose structure is
// sound: the areas after "bbolt" in CheckReport, the drop log at dropLog
// last unless dropLog is "". With blobs it also decodes what only the
// reading commands read back (checkBlobs). It never writes, on a writable
// db too.
func checkContent(ctx context.Context, db *bolt.DB, dir, dropLog string, blobs bool, rep *CheckReport) error {
	store, err := storage.New(db, storage.Options{ReadOnly: true})
	pages := rep.area("pages")
	if err != nil {
		pages.Problems = append(pages.Problems, err.Error())
		return nil
	}
	var fps []pageFP
	err = store.Pages(ctx, false, func(p *storage.Page) error {
		fps = append(fps, pageFP{p.ID, p.Fingerprint, p.Thin})
		return nil
	})
	if err != nil && ctx.Err() == nil {
		pages.Problems = append(pages.Problems, fmt.Sprintf("after %d pages: %v", len(fps), err))
	} else if err != nil {
		return err
	}
	nPages, nDrops, err := store.Counts(ctx)
	if err != nil {
		return err
	}
	pages.Summary = fmt.Sprintf("%d pages", len(fps))
	if len(pages.Problems) == 0 && nPages != len(fps) {
		pages.Problems = append(pages.Problems, fmt.Sprintf("the page count says %d, the store holds %d", nPages, len(fps)))
	}
	var hasStore bool
	if err := db.View(func(tx *bolt.Tx) error { hasStore = tx.Bucket([]byte("pages")) != nil; return nil }); err != nil {
		return err
	}
	if hasStore && len(fps) > 0 {
		checkIndex(db, fps, rep.area("index"))
	} else {
		// A file holding an index alone (built by a tool, not a crawl):
		// there are no pages to compare it with.
		pages.Summary = "none: the index is not compared with the store"
	}
	drops := rep.area("drops")
	byID := func(id uint64) bool {
		i := sort.Search(len(fps), func(i int) bool { return fps[i].id >= id })
		return i < len(fps) && fps[i].id == id
	}
	n := 0
	var dropIDs []uint64
	err = store.DropHeaders(ctx, func(d *storage.Drop) error {
		n++
		if blobs {
			dropIDs = append(dropIDs, d.ID)
		}
		// A drop of a page another worker of a distributed crawl stored
		// names it by URL: that page is in another data directory.
		if d.DuplicateOfURL == "" && !byID(d.DuplicateOf) && len(drops.Problems) < 10 {
			drops.Problems = append(drops.Problems, fmt.Sprintf("drop %d (%s) duplicates page %d, which is not stored", d.ID, d.URL, d.DuplicateOf))
		}
		return nil
	})
	if err != nil && ctx.Err() == nil {
		drops.Problems = append(drops.Problems, fmt.Sprintf("after %d drops: %v", n, err))
	} else if err != nil {
		return err
	}
	drops.Summary = fmt.Sprintf("%d drops", n)
	if len(drops.Problems) == 0 && n != nDrops {
		drops.Problems = append(drops.Problems, fmt.Sprintf("the drop sequence says %d, the store holds %d", nDrops, n))
	}
	if blobs {
		if err := checkBlobs(ctx, db, store, fps, dropIDs, rep.area(bodiesArea)); err != nil {
			return err
		}
	}
	fr := rep.area("frontier")
	var s frontier.Stats
	err = db.View(func(tx *bolt.Tx) error {
		if err := frontier.CheckTx(tx, "", func(p string) { fr.Problems = append(fr.Problems, p) }); err != nil {
			return err
		}
		s, err = frontier.ReadStats(tx, "")
		return err
	})
	if err != nil {
		fr.Problems = append(fr.Problems, err.Error())
	}
	fr.Summary = fmt.Sprintf("%d pending, %d in flight, %d done, %d failed", s.Pending, s.InFlight, s.Done, s.Failed)
	if s.InFlight > 0 {
		fr.Notes = append(fr.Notes, fmt.Sprintf("%d URLs in flight when the crawl stopped: a resumed crawl fetches them again", s.InFlight))
	}
	if dropLog != "" {
		checkLog(ctx, dropLog, store, rep.area(logArea))
	}
	return nil
}

// bodiesArea names the CheckArea of checkBlobs.
const bodiesArea = "bodies"

// checkBlobs decodes what a crawl never reads back but export, dups show
// and the web view do: every page's raw body and header, and every drop's
// kept text. Each is a zstd frame of its own, so one can be damaged in a
// file whose structure and records are sound. Only crawl check runs it: a
// crawl's open does not (it decompresses every body once), and a crawl
// resumes on such a directory, since it never reads them. Problems past
// the tenth of each kind are counted, not listed.
func checkBlobs(ctx context.Context, db *bolt.DB, store *storage.Store, fps []pageFP, dropIDs []uint64, a *CheckArea) error {
	a.Summary = fmt.Sprintf("%d pages' bodies and headers, %d drops' texts", len(fps), len(dropIDs))
	const hint = "export and dups show fail on it; crawl repair keeps the page without it"
	bad := 0
	err := db.View(func(tx *bolt.Tx) error {
		for i, p := range fps {
			if i%1024 == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			if _, err := store.GetTx(tx, p.id); err != nil {
				if bad++; bad <= 10 {
					a.Problems = append(a.Problems, fmt.Sprintf("%s (%s)", strings.ReplaceAll(err.Error(), "storage: ", ""), hint))
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if bad > 10 {
		a.Problems = append(a.Problems, fmt.Sprintf("and %d more pages whose body or header does not decode", bad-10))
	}
	bad = 0
	for _, id := range dropIDs {
		if _, err := store.GetDrop(ctx, id); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if bad++; bad <= 10 {
				a.Problems = append(a.Problems, fmt.Sprintf("%s (dups show cannot diff it; crawl repair keeps the drop without it)", strings.ReplaceAll(err.Error(), "storage: ", "")))
			}
		}
	}
	if bad > 10 {
		a.Problems = append(a.Problems, fmt.Sprintf("and %d more drops whose text does not decode", bad-10))
	}
	return nil
}

// checkIndex compares the index's id-to-fingerprint records with the stored
// non-thin pages, and looks each page's fingerprint up in the tables.
func checkIndex(db *bolt.DB, fps []pageFP, a *CheckArea) {
	var layout, scheme, format string
	var ok, current bool
	if err := db.View(func(tx *bolt.Tx) error {
		layout, scheme, ok = contentseen.ReadBoltMeta(tx, "")
		format, current = contentseen.BoltFormatTx(tx, "")
		return nil
	}); err != nil || !ok {
		for _, p := range fps {
			if !p.thin {
				a.Problems = append(a.Problems, "no ContentSeen index, but the store holds non-thin pages")
				break
			}
		}
		a.Summary = "none"
		return
	}
	if !current {
		a.Summary = fmt.Sprintf("storage format %s, written by an older version", format)
		a.Notes = append(a.Notes, "not checked: `crawl index migrate --data DIR --layout "+layout+"` rebuilds it in this version's format")
		return
	}
	l, err := contentseen.LayoutByName(layout)
	if err != nil {
		a.Problems = append(a.Problems, fmt.Sprintf("layout %q: %v", layout, err))
		return
	}
	x, err := contentseen.NewBoltIndex(db, contentseen.BoltOptions{Layout: l, Scheme: scheme, ReadOnly: true})
	if err != nil {
		a.Problems = append(a.Problems, err.Error())
		return
	}
	defer x.Close()
	add := func(format string, args ...any) {
		if len(a.Problems) < 10 {
			a.Problems = append(a.Problems, fmt.Sprintf(format, args...))
		}
	}
	indexed := 0
	err = db.View(func(tx *bolt.Tx) error {
		i := 0 // fps and the index are both in id order: merge them
		err := x.ScanTx(tx, func(id uint64, fp contentseen.Fingerprint) error {
			indexed++
			// A stored page missing here is fine when its fingerprint is
			// (another page's): the index holds each fingerprint once. The
			// look-ups below find a page whose fingerprint is missing.
			for i < len(fps) && fps[i].id < id {
				i++
			}
			switch {
			case i == len(fps) || fps[i].id != id:
				add("the index holds page %d, which is not stored", id)
			case fps[i].thin:
				add("thin page %d is indexed", id)
			case uint64(fp) != fps[i].fp:
				add("page %d has fingerprint %016x, the index %016x", id, fps[i].fp, uint64(fp))
			}
			if i < len(fps) && fps[i].id == id {
				i++
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, p := range fps {
			if !p.indexed() {
				continue
			}
			ms, err := x.NearTx(tx, contentseen.Fingerprint(p.fp), 0)
			if err != nil {
				return fmt.Errorf("look up page %d: %w", p.id, err)
			}
			if len(ms) == 0 {
				add("page %d is stored but its fingerprint %016x is not in the index", p.id, p.fp)
			}
		}
		return nil
	})
	if err != nil {
		add("%v", err)
	}
	a.Summary = fmt.Sprintf("%d fingerprints, layout %s", indexed, layout)
}

// checkLog compares the drop log with the store's drops without changing
// it.
func checkLog(ctx context.Context, path string, store *storage.Store, a *CheckArea) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		f = nil
	} else if err != nil {
		a.Problems = append(a.Problems, err.Error())
		return
	}
	var m logMatch
	if f != nil {
		defer f.Close()
		m, err = matchDropLog(ctx, f, store)
	} else {
		m, err = matchDropLog(ctx, eofReader{}, store)
	}
	if err != nil {
		a.Problems = append(a.Problems, err.Error())
		return
	}
	a.Summary = fmt.Sprintf("%s: %d lines match the store's drops", path, m.lines)
	if m.problem != "" {
		a.Problems = append(a.Problems, m.problem)
		return
	}
	if m.torn > 0 {
		a.Notes = append(a.Notes, fmt.Sprintf("a torn last line of %d bytes (a crash): the next crawl cuts it", m.torn))
	}
	if m.missing > 0 {
		a.Notes = append(a.Notes, fmt.Sprintf("the last %d drop%s are not logged yet (a crash): the next crawl appends them", m.missing, plural(m.missing)))
	}
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// structureProblems lists the structural problems one by one: those of
// the walk's report, or what (a DamageError's joined text) when the walk
// found nothing (bbolt's own check did) or did not run.
func structureProblems(walk *boltcheck.Report, what string) []string {
	if walk == nil || walk.OK() {
		return []string{what}
	}
	var ps []string
	for _, p := range walk.Problems {
		ps = append(ps, p.String())
	}
	if walk.Truncated {
		ps = append(ps, "(and more: the first 100 are listed)")
	}
	return ps
}
