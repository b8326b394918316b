package crawler

import (
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/storage"
)

// DataSet is the data directories of one crawl, opened read-only together
// so that `crawl export`, `dups`, `stats`, `failed` and `serve` show one
// crawl. A crawl on one machine has one directory; a distributed crawl
// has one per worker, each holding the pages and drops of its worker, and
// a drop in one may duplicate a page stored in another
// (storage.Drop.DuplicateOfURL).
//
// A DataSet is for one goroutine (or callers serialise its use, as the
// web view does): Recover names the directory that Each was reading when
// a read failed, and KeptPage caches its answers.
type DataSet struct {
	Dirs []*Data

	cur  int                // index in Dirs of the directory being read
	kept map[string]PageRef // KeptPage's answers by URL
}

// PageRef names a stored page of a DataSet: the index of its directory in
// Dirs and its ID in that directory's store.
type PageRef struct {
	Dir int
	ID  uint64
}

// OpenDataSet opens every directory of dirs with OpenData, in order, and
// fails with the first one's error (each names its directory), closing
// those it opened.
func OpenDataSet(dirs []string, timeout time.Duration) (*DataSet, error) {
	if len(dirs) == 0 {
		return nil, errors.New("crawler: no data directory to open")
	}
	s := &DataSet{kept: map[string]PageRef{}}
	for _, dir := range dirs {
		d, err := OpenData(dir, timeout)
		if err != nil {
			if len(s.Dirs) == 0 {
				return nil, err
			}
			debug.SetPanicOnFault(s.Dirs[0].faultWas)
			if cerr := s.Close(); cerr != nil {
				return nil, errors.Join(err, cerr)
			}
			return nil, err
		}
		s.Dirs = append(s.Dirs, d)
	}
	return s, nil
}

// NewDataSet makes a DataSet of directories already open (OpenData, or a
// running crawl's Crawler.LiveData), for a reader that opened them itself,
// such as the web view. Close closes them; a reader that closes them
// itself need not call it.
func NewDataSet(dirs []*Data) *DataSet {
	return &DataSet{Dirs: dirs, kept: map[string]PageRef{}}
}

// Close closes every directory and returns their errors, each naming its
// directory when there are several.
func (s *DataSet) Close() error {
	var errs []error
	for _, d := range s.Dirs {
		if err := d.Close(); err != nil {
			if len(s.Dirs) > 1 {
				err = fmt.Errorf("%s: %w", d.Dir, err)
			}
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Each calls fn with every directory in order and stops at the first
// error, which it returns as it is. Reads of one directory inside fn are
// what Recover blames.
func (s *DataSet) Each(fn func(i int, d *Data) error) error {
	for i, d := range s.Dirs {
		s.cur = i
		if err := fn(i, d); err != nil {
			return err
		}
	}
	return nil
}

// In returns directory i and makes it the one Recover blames.
func (s *DataSet) In(i int) *Data {
	s.cur = i
	return s.Dirs[i]
}

// Recover is Data.Recover for the set, deferred right after OpenDataSet
// in the goroutine that reads: a panic, memory fault or undecodable
// record becomes an error naming the directory being read (the last one
// Each or In chose).
func (s *DataSet) Recover(err *error) {
	debug.SetPanicOnFault(s.Dirs[0].faultWas)
	d := s.Dirs[s.cur]
	if p := recover(); p != nil {
		*err = panicDamage(d.Dir, p)
		return
	}
	d.explainReadError(err)
}

// KeptPage returns the stored page that drop dr, read from directory dir,
// duplicates: page dr.DuplicateOf of the same directory, or for a drop
// whose page another worker stored (dr.DuplicateOfURL), the page stored
// under that URL in dir, else in the other directories in order. ok is
// false when no directory of the set stores it (a worker's directory was
// not given). Pages are found by their requested URL, which is what a drop
// record names; answers are cached by URL.
func (s *DataSet) KeptPage(dir int, dr *storage.Drop) (ref PageRef, ok bool, err error) {
	if dr.DuplicateOfURL == "" {
		return PageRef{Dir: dir, ID: dr.DuplicateOf}, true, nil
	}
	if ref, ok := s.kept[dr.DuplicateOfURL]; ok {
		return ref, true, nil
	}
	order := append([]int{dir}, others(len(s.Dirs), dir)...)
	cur := s.cur
	defer func() { s.cur = cur }()
	for _, i := range order {
		d := s.In(i)
		var id uint64
		err := d.DB.View(func(tx *bolt.Tx) error {
			id, ok = d.Store.URLStoredTx(tx, dr.DuplicateOfURL)
			return nil
		})
		if err != nil {
			return PageRef{}, false, fmt.Errorf("crawler: %s: find page %s: %w", d.Dir, dr.DuplicateOfURL, err)
		}
		if ok {
			ref = PageRef{Dir: i, ID: id}
			s.kept[dr.DuplicateOfURL] = ref
			return ref, true, nil
		}
	}
	return PageRef{}, false, nil
}

// others returns 0..n-1 without skip.
func others(n, skip int) []int {
	out := make([]int, 0, n)
	for i := range n {
		if i != skip {
			out = append(out, i)
		}
	}
	return out
}
