package crawler

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/internal/boltcheck"
	"github.com/simcrawl/simcrawl/storage"
)

// RepairSummary says what Repair copied and what it left behind.
type RepairSummary struct {
	Damage           []string // what the source's structure check found
	Pages, PagesLost int
	BodiesLost       int // pages kept without their raw body and header, which did not decode
	Drops, DropsLost int
	DropTextsLost    int // drops kept without their page's kept text, which did not decode
	Indexed          int // fingerprints in the rebuilt index
	Frontier         frontier.CopyStats
	Layout, Scheme   string       // of the rebuilt index
	Check            *CheckReport // of the new directory
	SalvagedKeys     int          // key/value pairs read from the source file
}

// Repair writes a new data directory out from what can be read of dir,
// without writing to dir: every bucket and key/value pair of crawl.db that
// can be read (boltcheck.Salvage: damaged pages are skipped) goes into a
// scratch file in out, then the pages whose records, texts and bodies
// decode are stored under their IDs, the drops whose records decode and
// whose page survived are recorded, the ContentSeen index is rebuilt from
// the stored pages' fingerprints (with the source's layout and scheme, or
// layout and scheme when the source's are unreadable), the frontier's
// consistent part is copied (frontier.CopyTx), other buckets are copied as
// they are, and the drop log is written from the new store. The scratch
// file is removed and the new directory checked (CheckData). out must not
// exist or be empty. It fails with ErrLocked while a crawl runs on dir.
func Repair(ctx context.Context, dir, out string, layout contentseen.Layout, scheme string) (*RepairSummary, error) {
	if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("crawler: repair: %s is not empty; name a new directory", out)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("crawler: repair: %w", err)
	}
	if abs(dir) == abs(out) {
		return nil, errors.New("crawler: repair: --out must be another directory")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("crawler: repair: %w", err)
	}
	sum := &RepairSummary{}
	scratch := filepath.Join(out, ".salvage.db")
	defer os.Remove(scratch)
	tmp, err := salvage(dir, scratch, sum)
	if err != nil {
		return nil, err
	}
	defer tmp.Close()
	dst, err := bolt.Open(filepath.Join(out, DBFile), 0o600, &bolt.Options{Timeout: time.Second, NoSync: true})
	if err != nil {
		return nil, fmt.Errorf("crawler: repair: %w", err)
	}
	err = rebuild(ctx, tmp, dst, out, layout, scheme, sum)
	dst.NoSync = false
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("crawler: repair: %w", err)
	}
	if sum.Check, err = CheckData(ctx, out, "", 0); err != nil {
		return nil, fmt.Errorf("crawler: repair: check the new directory: %w", err)
	}
	return sum, nil
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

// pageWithoutBody reads page id from the salvaged store with its record
// and text but not its body and header.
func pageWithoutBody(tmp *bolt.DB, src *storage.Store, id uint64) (p *storage.Page, err error) {
	err = tmp.View(func(tx *bolt.Tx) error {
		p, err = src.PageTextTx(tx, id)
		return err
	})
	return p, err
}

// salvage copies every bucket and key/value pair of dir's crawl.db that
// can be read into a new bbolt file at scratch, in transactions of up to
// 10,000 puts.
func salvage(dir, scratch string, sum *RepairSummary) (*bolt.DB, error) {
	path := filepath.Join(dir, DBFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("crawler: repair: %w", err)
	}
	defer f.Close()
	if err := lockDir(f, dir, false, time.Second); err != nil {
		return nil, fmt.Errorf("crawler: repair: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	tmp, err := bolt.Open(scratch, 0o600, &bolt.Options{NoSync: true})
	if err != nil {
		return nil, fmt.Errorf("crawler: repair: %w", err)
	}
	tx, err := tmp.Begin(true)
	if err != nil {
		return nil, errors.Join(err, tmp.Close())
	}
	puts, unwritable := 0, 0
	rep, err := boltcheck.Salvage(f, st.Size(), func(path [][]byte, k, v []byte, seq uint64) error {
		switch ok, err := putSalvaged(tx, path, k, v, seq); {
		case err != nil:
			return err
		case !ok:
			unwritable++
			return nil
		case k == nil:
			return nil
		}
		sum.SalvagedKeys++
		if puts++; puts%10000 == 0 {
			if err := tx.Commit(); err != nil {
				return err
			}
			tx, err = tmp.Begin(true)
			return err
		}
		return nil
	})
	if err == nil {
		err = tx.Commit()
	} else {
		err = errors.Join(err, tx.Rollback())
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("crawler: repair: salvage %s: %w", path, err), tmp.Close())
	}
	for _, p := range rep.Problems {
		sum.Damage = append(sum.Damage, p.String())
	}
	if unwritable > 0 {
		sum.Damage = append(sum.Damage, fmt.Sprintf("%d records read with an empty, oversized or clashing bucket name or key (damaged bytes), left out", unwritable))
	}
	if sum.SalvagedKeys == 0 && !rep.OK() {
		return nil, errors.Join(fmt.Errorf("crawler: repair: nothing could be read from %s: %w", path, rep.Err()), tmp.Close())
	}
	if rep.Truncated {
		sum.Damage = append(sum.Damage, "(and more)")
	}
	return tmp, nil
}

// putSalvaged writes one record Salvage read (a key/value pair, or with
// k nil a bucket's sequence) under the bucket path into tx. A record that
// bbolt cannot hold, whose bytes damage must have changed (an empty bucket
// name or key, one past bbolt's size limits, a name that is a bucket on
// one page and a value on another), is left out: ok false, err nil.
func putSalvaged(tx *bolt.Tx, path [][]byte, k, v []byte, seq uint64) (ok bool, err error) {
	b, err := tx.CreateBucketIfNotExists(path[0])
	for _, p := range path[1:] {
		if err != nil {
			break
		}
		b, err = b.CreateBucketIfNotExists(p)
	}
	if err == nil {
		if k == nil {
			err = b.SetSequence(seq)
		} else {
			err = b.Put(k, v)
		}
	}
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, berrors.ErrBucketNameRequired), errors.Is(err, berrors.ErrKeyRequired),
		errors.Is(err, berrors.ErrKeyTooLarge), errors.Is(err, berrors.ErrValueTooLarge),
		errors.Is(err, berrors.ErrIncompatibleValue):
		return false, nil
	}
	return false, err
}

// rebuild writes the new data directory's crawl.db (dst) and drop log from
// the salvaged copy tmp.
func rebuild(ctx context.Context, tmp, dst *bolt.DB, out string, layout contentseen.Layout, scheme string, sum *RepairSummary) error {
	src, err := storage.New(tmp, storage.Options{KeepDropText: true})
	if err != nil {
		return fmt.Errorf("read the salvaged store: %w", err)
	}
	st, err := storage.New(dst, storage.DefaultOptions())
	if err != nil {
		return err
	}
	if err := tmp.View(func(tx *bolt.Tx) error {
		name, sch, ok := contentseen.ReadBoltMeta(tx, "")
		if !ok {
			return nil
		}
		if l, err := contentseen.LayoutByName(name); err == nil {
			layout, scheme = l, sch
		}
		return nil
	}); err != nil {
		return err
	}
	x, err := contentseen.NewBoltIndex(dst, contentseen.BoltOptions{Layout: layout, Scheme: scheme})
	if err != nil {
		return err
	}
	sum.Layout, sum.Scheme = layout.Name(), scheme
	stored := map[uint64]bool{}
	err = copyRecords(tmp, "meta", func(ids []uint64) error {
		var pages []*storage.Page
		for _, id := range ids {
			p, err := src.Get(ctx, id)
			if err != nil {
				// The raw body and header are kept for export only: a
				// page whose record and text decode is judged, listed and
				// crawled on from without them, so it is kept.
				if tp, terr := pageWithoutBody(tmp, src, id); terr == nil {
					p, err = tp, nil
					sum.BodiesLost++
				}
			}
			if err != nil || p.URL == "" {
				// A record that decodes but names no URL is damage too:
				// the store refuses it, and a page without a URL cannot
				// be crawled on from.
				sum.PagesLost++
				continue
			}
			if err := tmp.View(func(tx *bolt.Tx) error {
				p.Sketch, _ = src.SketchTx(tx, id) // read only by SketchTx
				return nil
			}); err != nil {
				return err
			}
			pages = append(pages, p)
		}
		return dst.Update(func(tx *bolt.Tx) error {
			for _, p := range pages {
				if _, err := st.PutTx(tx, p); errors.Is(err, storage.ErrExists) {
					sum.PagesLost++
					continue
				} else if err != nil {
					return err
				}
				stored[p.ID] = true
				sum.Pages++
				if !p.Thin && p.Fingerprint != 0 { // fingerprint 0: crawled with ContentSeen off
					if err := x.AddTx(tx, p.ID, contentseen.Fingerprint(p.Fingerprint)); err != nil {
						return err
					}
					sum.Indexed++
				}
			}
			return nil
		})
	})
	if err != nil {
		return errors.Join(err, x.Close())
	}
	if err := x.Close(); err != nil {
		return err
	}
	err = copyRecords(tmp, "drops", func(ids []uint64) error {
		var drops []*storage.Drop
		for _, id := range ids {
			d, err := src.GetDrop(ctx, id)
			if err != nil {
				// The kept text of a dropped page only shows it beside its
				// page (dups show): the drop itself is kept without it.
				if hd, herr := src.GetDropHeader(ctx, id); herr == nil {
					d, err = hd, nil
					sum.DropTextsLost++
				}
			}
			// A drop of another worker's page (DuplicateOfURL) keeps it:
			// that page is not in this directory.
			if err != nil || d.DuplicateOfURL == "" && !stored[d.DuplicateOf] {
				sum.DropsLost++
				continue
			}
			d.ID = 0
			drops = append(drops, d)
		}
		return dst.Update(func(tx *bolt.Tx) error {
			for _, d := range drops {
				if err := st.PutDropTx(tx, d); err != nil {
					return err
				}
				sum.Drops++
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	err = tmp.View(func(stx *bolt.Tx) error {
		return dst.Update(func(dtx *bolt.Tx) error {
			var err error
			if sum.Frontier, err = frontier.CopyTx(stx, dtx, "", func(url, _ string) bool {
				// A URL done whose page or drop did not survive is fetched
				// again by the next crawl, not skipped as done forever.
				_, stored := st.URLStoredTx(dtx, url)
				_, dropped := st.DropURLTx(dtx, url)
				return !stored && !dropped
			}); err != nil {
				return err
			}
			return stx.ForEach(func(name []byte, b *bolt.Bucket) error {
				switch string(name) {
				case "pages", "contentseen", "frontier":
					return nil
				}
				return copyBucket(b, dtx, name)
			})
		})
	})
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(out, "dropped.jsonl"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	err = rewriteMissing(ctx, f, 0, 0, st)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// copyRecords calls fn with the IDs of the store's nested bucket sub in the
// salvaged copy, 256 at a time, in ID order.
func copyRecords(tmp *bolt.DB, sub string, fn func(ids []uint64) error) error {
	var ids []uint64
	err := tmp.View(func(tx *bolt.Tx) error {
		top := tx.Bucket([]byte("pages"))
		if top == nil || top.Bucket([]byte(sub)) == nil {
			return nil
		}
		return top.Bucket([]byte(sub)).ForEach(func(k, _ []byte) error {
			if len(k) == 8 {
				ids = append(ids, binary.BigEndian.Uint64(k))
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	for len(ids) > 0 {
		n := min(len(ids), 256)
		if err := fn(ids[:n]); err != nil {
			return err
		}
		ids = ids[n:]
	}
	return nil
}

// copyBucket copies bucket b (and its nested buckets) as name into dtx.
func copyBucket(b *bolt.Bucket, dtx *bolt.Tx, name []byte) error {
	to, err := dtx.CreateBucketIfNotExists(name)
	if err != nil {
		return err
	}
	return copyInto(b, to)
}

func copyInto(from, to *bolt.Bucket) error {
	if err := to.SetSequence(from.Sequence()); err != nil {
		return err
	}
	return from.ForEach(func(k, v []byte) error {
		if v == nil {
			if sub := from.Bucket(k); sub != nil {
				nb, err := to.CreateBucketIfNotExists(bytes.Clone(k))
				if err != nil {
					return err
				}
				return copyInto(sub, nb)
			}
		}
		return to.Put(bytes.Clone(k), bytes.Clone(v))
	})
}
