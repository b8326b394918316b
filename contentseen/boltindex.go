package contentseen

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// BoltOptions configure a BoltIndex.
type BoltOptions struct {
	// Layout of the tables; the zero Layout means DefaultLayout().
	Layout Layout
	// Scheme is the text of the feature options the fingerprints were made
	// with. It is recorded with the index; reopening with another Layout
	// or Scheme is an error naming both, so an index never mixes schemes.
	Scheme string
	// Bucket is the top-level bucket holding everything; default
	// "contentseen".
	Bucket string
	// Timeout bounds how long OpenBolt waits for the file lock held by
	// another process; default 1s. Not used by NewBoltIndex.
	Timeout time.Duration
	// NoSync skips fsync on commit (tests, bulk builds). Only for OpenBolt;
	// with NewBoltIndex the caller sets db.NoSync.
	NoSync bool
	// ReadOnly reads a writable db as if it were opened read-only: the
	// index's buckets are only checked, no merge runs, and the caller must
	// not add (Seen, Add, AddBatch and the Tx forms that would insert
	// return an error). For checking a database before anything writes to
	// it. OpenBolt opens its file read-only.
	ReadOnly bool
	// MemoryLimit, if above 0, lets a writable index hold its tables
	// decoded in memory as well, up to this many bytes (56 bytes per
	// fingerprint with 4x16: mirrorBytes), so that queries do not read the blocks: a
	// k=7 query at 10M takes 23 to 26 µs instead of about 190 (boltmirror.go).
	// They are decoded when the index opens (1.6 s at 10M) and kept
	// up to date by merges; past the limit the blocks are read.
	MemoryLimit int64
}

// BoltIndex is an Index stored in a bbolt database, under one top-level
// bucket:
//
//	meta    layout name, scheme, storage format ("3"), count (8-byte
//	        big-endian), building marker
//	fps     id (8-byte big-endian) -> fingerprint: the last fingerprint
//	        recorded under an id
//	tables  every table as sorted, compressed blocks of permuted
//	        fingerprints (ids in table 0): key table number + the block's
//	        first permuted fingerprint (boltblock.go)
//	codes   the tables' Huffman code versions (boltcode.go)
//	delta   sequence number -> (fingerprint, id): recorded, not yet merged
//	        into the blocks (boltdelta.go)
//
// A query seeks once per table to the block holding the query's prefix,
// decodes the prefix range with XOR and popcount, and looks in the delta's
// mirror in memory; an insert appends to the delta. Look-up and insert
// happen in one write transaction. A merger goroutine moves the delta into
// the blocks when it passes 1/64 of the index (boltmerge.go).
// Seen and Add group concurrent callers into one transaction (one fsync)
// on a committer goroutine, so durable throughput grows with the number of
// concurrent callers; the ...Tx methods work inside the caller's own
// transaction instead (the crawler indexes, stores and queues a page in
// one transaction).
//
// Cost on disk: per table about 64 - log2(N) + 2 bits per fingerprint
// (plus the id's bytes in table 0), in blocks filled full by AddBatch and
// by merges, plus about 32 bytes per id in
// fps (see the package doc for measured figures). Memory: the delta's
// mirror, 8 bytes per table per entry and 8 for its id, at most about
// 2 × N/64 entries.
//
// BoltIndex is safe for concurrent use. Do not call Seen, Add or AddBatch
// while holding a write transaction of the same DB: they wait for it.
type BoltIndex struct {
	layout Layout
	scheme string
	db     *bolt.DB
	ownsDB bool // opened by OpenBolt: Close closes db
	// readOnly: db is read-only or BoltOptions.ReadOnly was set
	readOnly bool

	bucket     []byte // top-level bucket name
	blockLimit int    // largest block value written, bytes; tests lower it
	format     int    // the index's storage format, 3 or 4 (formatVersion), set by Open
	minDelta   int    // if > 0, the delta size that starts a merge; tests lower it

	codes codeRegistry
	delta *deltaState
	mem   tablesMirror // the tables held in memory (BoltOptions.MemoryLimit)

	reqs chan *request // to the committer
	done chan struct{} // closed when the committer has exited

	mergeKick  chan struct{}      // wakes the merger; nil when read-only
	mergeDone  chan struct{}      // closed when the merger has exited
	stopMerge  context.CancelFunc // stops the merger
	mergeMu    sync.Mutex         // one merge at a time
	mergeErrMu sync.Mutex
	mergeErr   error        // the last background merge's error, nil after a success
	merges     atomic.Int64 // merges completed since opened
	// The delta's records whose pages the merger dropped from memory go
	// up to sequence droppedSeq (guarded by mergeMu); it drops the next
	// ones when the delta's length reaches nextDrop (boltpages.go).
	droppedSeq uint64
	nextDrop   atomic.Int64

	afterMergeStep func(table int) // tests: called after each merge step
	betweenReads   func()          // tests: called by near between its reads of the delta's view and of the tables

	mu     sync.RWMutex // guards closed; held for reading while sending on reqs
	closed bool
}

var _ Index = (*BoltIndex)(nil)

var (
	metaBucket = []byte("meta")
	fpsBucket  = []byte("fps")

	layoutKey   = []byte("layout")
	schemeKey   = []byte("scheme")
	formatKey   = []byte("format")
	countKey    = []byte("count")
	buildingKey = []byte("building")
)

// errReadOnly refuses a write through an index opened read-only or with
// BoltOptions.ReadOnly.
var errReadOnly = errors.New("contentseen: the index is open read-only")

// OpenBolt opens or creates an index in its own bbolt file at path. If
// another process holds the file, it fails after o.Timeout with an error
// saying so (wrapping bbolt's ErrTimeout). The file is written without
// free-list sync (fewer pages per commit) except by Close's last commit,
// so an open after a clean Close reads the free list, and one after a
// crash rebuilds it by reading every page.
func OpenBolt(path string, o BoltOptions) (*BoltIndex, error) {
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = time.Second
	}
	// ReadOnly opens the file read-only (a shared lock, no file created, no
	// commit on Close).
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: timeout, NoFreelistSync: true, FreelistType: bolt.FreelistMapType, ReadOnly: o.ReadOnly})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("contentseen: open index %s: another process holds it (no lock after %v): %w", path, timeout, err)
	}
	if err != nil {
		return nil, fmt.Errorf("contentseen: open index %s: %w", path, err)
	}
	db.NoSync = o.NoSync
	x, err := NewBoltIndex(db, o)
	if err != nil {
		if cerr := db.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		return nil, fmt.Errorf("contentseen: open index %s: %w", path, err)
	}
	x.ownsDB = true
	return x, nil
}

// NewBoltIndex keeps an index inside db, which the caller owns and closes
// after the index's Close. It creates the buckets, or checks that the ones
// there were made with the same layout and scheme and in this version's
// storage format (an index written by an older version must be rebuilt).
func NewBoltIndex(db *bolt.DB, o BoltOptions) (*BoltIndex, error) {
	if !o.Layout.valid() {
		o.Layout = DefaultLayout()
	}
	if o.Bucket == "" {
		o.Bucket = "contentseen"
	}
	x := &BoltIndex{
		layout: o.Layout,
		scheme: o.Scheme,
		db:     db,
		bucket: []byte(o.Bucket),

		readOnly: db.IsReadOnly() || o.ReadOnly,
		reqs:     make(chan *request, 1024),
		done:     make(chan struct{}),

		blockLimit: maxBlock,
		delta:      newDeltaState(o.Layout),
		mem:        tablesMirror{limit: o.MemoryLimit},
	}
	x.codes.init(o.Layout.Tables())
	if o.Layout.Tables() > 256 {
		return nil, fmt.Errorf("contentseen: layout %s has %d tables, at most 256 fit the storage format", o.Layout.Name(), o.Layout.Tables())
	}
	check := x.checkMeta
	if !x.readOnly {
		check = x.initMeta
	}
	if err := check(db); err != nil {
		return nil, err
	}
	if err := db.View(x.loadState); err != nil {
		return nil, err
	}
	if err := x.buildMirror(context.Background()); err != nil {
		return nil, err
	}
	go x.commitLoop()
	if !x.readOnly {
		ctx, cancel := context.WithCancel(context.Background())
		x.stopMerge = cancel
		x.mergeKick, x.mergeDone = make(chan struct{}, 1), make(chan struct{})
		x.nextDrop.Store(dropEvery)
		x.delta.onCommit = x.kickMerge
		go x.mergeLoop(ctx)
		x.kickMerge() // a delta left over from the last run
	}
	return x, nil
}

// loadState reads the code versions and fills the delta's mirror.
func (x *BoltIndex) loadState(tx *bolt.Tx) error {
	top, err := x.top(tx)
	if err != nil {
		return err
	}
	if err := x.codes.load(top.Bucket(codesBucket)); err != nil {
		return err
	}
	return x.delta.load(context.Background(), top.Bucket(deltaBucket))
}

// initMeta creates the buckets and records the layout and scheme, or
// checks them when the index exists.
func (x *BoltIndex) initMeta(db *bolt.DB) error {
	return db.Update(func(tx *bolt.Tx) error {
		top, err := tx.CreateBucketIfNotExists(x.bucket)
		if err != nil {
			return fmt.Errorf("contentseen: create bucket %q: %w", x.bucket, err)
		}
		meta := top.Bucket(metaBucket)
		if meta != nil {
			return x.checkMetaBucket(meta)
		}
		for _, name := range [][]byte{metaBucket, fpsBucket, tablesBucket, codesBucket, deltaBucket} {
			if _, err := top.CreateBucket(name); err != nil {
				return fmt.Errorf("contentseen: create bucket %q/%q: %w", x.bucket, name, err)
			}
		}
		meta = top.Bucket(metaBucket)
		x.format = formatNumber(formatVersion)
		for _, kv := range [][2][]byte{
			{layoutKey, []byte(x.layout.Name())},
			{schemeKey, []byte(x.scheme)},
			{formatKey, []byte(formatVersion)},
			{countKey, binary.BigEndian.AppendUint64(nil, 0)},
		} {
			if err := meta.Put(kv[0], kv[1]); err != nil {
				return fmt.Errorf("contentseen: write meta: %w", err)
			}
		}
		return nil
	})
}

// checkMeta checks an existing index in a read-only db.
func (x *BoltIndex) checkMeta(db *bolt.DB) error {
	return db.View(func(tx *bolt.Tx) error {
		top := tx.Bucket(x.bucket)
		if top == nil || top.Bucket(metaBucket) == nil {
			return fmt.Errorf("contentseen: no index in bucket %q of a read-only database", x.bucket)
		}
		return x.checkMetaBucket(top.Bucket(metaBucket))
	})
}

func (x *BoltIndex) checkMetaBucket(meta *bolt.Bucket) error {
	f := meta.Get(formatKey)
	if !readableFormat(string(f)) {
		if f == nil {
			f = []byte("1") // format 1 had no version key
		}
		return fmt.Errorf("contentseen: index in bucket %q has storage format %s, this version reads formats %s to %s: rebuild the index (a crawl's: crawl index migrate --data DIR)",
			x.bucket, f, oldestFormat, formatVersion)
	}
	x.format = formatNumber(string(f))
	layout, scheme := string(meta.Get(layoutKey)), string(meta.Get(schemeKey))
	if layout != x.layout.Name() || scheme != x.scheme {
		return fmt.Errorf("contentseen: index in bucket %q was built with layout %s and scheme %q, opened with layout %s and scheme %q",
			x.bucket, layout, scheme, x.layout.Name(), x.scheme)
	}
	if meta.Get(buildingKey) != nil {
		return fmt.Errorf("contentseen: index in bucket %q: a bulk load (AddBatch) was interrupted; rebuild the index", x.bucket)
	}
	return nil
}

// readableFormat reports whether this version reads storage format f.
func readableFormat(f string) bool { return f == oldestFormat || f == formatVersion }

// formatNumber returns readable format f as a number.
func formatNumber(f string) int {
	if f == oldestFormat {
		return 3
	}
	return 4
}

// Layout returns the index's layout.
func (x *BoltIndex) Layout() Layout { return x.layout }

// Seen implements Index. Concurrent calls share one write transaction,
// processed in arrival order, so near-duplicates within one group are
// resolved as if the calls were sequential.
func (x *BoltIndex) Seen(ctx context.Context, id uint64, fp Fingerprint) (Match, bool, error) {
	r := &request{ctx: ctx, id: id, fp: fp, done: make(chan struct{})}
	if err := x.submit(ctx, r); err != nil {
		return Match{}, false, err
	}
	return r.m, r.found, r.err
}

// Add implements Index; like Seen it is grouped with concurrent callers.
func (x *BoltIndex) Add(ctx context.Context, id uint64, fp Fingerprint) error {
	r := &request{ctx: ctx, id: id, fp: fp, add: true, done: make(chan struct{})}
	if err := x.submit(ctx, r); err != nil {
		return err
	}
	return r.err
}

// Near implements Index.
func (x *BoltIndex) Near(ctx context.Context, fp Fingerprint, k int) ([]Match, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return nil, ErrClosed
	}
	var ms []Match
	err := x.db.View(func(tx *bolt.Tx) error {
		var err error
		ms, err = x.NearTx(tx, fp, k)
		return err
	})
	return ms, err
}

// Len implements Index. It returns 0 if the count cannot be read.
func (x *BoltIndex) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return 0
	}
	n := 0
	if err := x.db.View(func(tx *bolt.Tx) error { n = x.LenTx(tx); return nil }); err != nil {
		return 0
	}
	return n
}

// Close stops the committer after it has committed the queued requests,
// and closes the database if OpenBolt opened it.
func (x *BoltIndex) Close() error {
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return ErrClosed
	}
	x.closed = true
	close(x.reqs)
	x.mu.Unlock()
	<-x.done
	var merr error
	if x.stopMerge != nil {
		x.stopMerge()
		<-x.mergeDone
		x.mergeErrMu.Lock()
		merr = x.mergeErr
		x.mergeErrMu.Unlock()
	}
	x.dropMirror()
	if merr != nil {
		merr = fmt.Errorf("contentseen: close index: the last merge failed (the delta keeps its entries): %w", merr)
	}
	if x.ownsDB {
		var ferr error
		if !x.db.IsReadOnly() {
			// One last commit with the free list: the next open reads it
			// instead of rebuilding it from every page (31 s for a 10M
			// index with a cold page cache). After a crash the next open
			// rebuilds it.
			x.db.NoFreelistSync = false
			if err := x.db.Update(func(*bolt.Tx) error { return nil }); err != nil {
				ferr = fmt.Errorf("contentseen: close index: write free list: %w", err)
			}
		}
		if err := x.db.Close(); err != nil {
			return errors.Join(merr, ferr, fmt.Errorf("contentseen: close index: %w", err))
		}
		return errors.Join(merr, ferr)
	}
	return merr
}

// SeenTx is Seen inside the caller's write transaction: if nothing within
// K of fp is stored, it records (id, fp) in tx. The record is durable when
// tx commits; two callers are serialised by bbolt's single writer.
func (x *BoltIndex) SeenTx(tx *bolt.Tx, id uint64, fp Fingerprint) (Match, bool, error) {
	top, err := x.top(tx)
	if err != nil {
		return Match{}, false, err
	}
	ms, err := x.near(tx, top, fp, x.layout.K())
	if err != nil {
		return Match{}, false, err
	}
	if len(ms) > 0 {
		return best(ms), true, nil
	}
	return Match{}, false, x.insert(tx, top, id, fp)
}

// AddTx is Add inside the caller's write transaction.
func (x *BoltIndex) AddTx(tx *bolt.Tx, id uint64, fp Fingerprint) error {
	top, err := x.top(tx)
	if err != nil {
		return err
	}
	ms, err := x.near(tx, top, fp, 0)
	if err != nil || len(ms) > 0 {
		return err
	}
	return x.insert(tx, top, id, fp)
}

// NearTx is Near inside the caller's transaction (read or write).
func (x *BoltIndex) NearTx(tx *bolt.Tx, fp Fingerprint, k int) ([]Match, error) {
	if err := checkK(x.layout, k); err != nil {
		return nil, err
	}
	top, err := x.top(tx)
	if err != nil {
		return nil, err
	}
	ms, err := x.near(tx, top, fp, k)
	sortMatches(ms)
	return ms, err
}

// LenTx returns the number of distinct fingerprints stored as seen by tx
// (0 if the index's buckets are missing).
func (x *BoltIndex) LenTx(tx *bolt.Tx) int {
	top, err := x.top(tx)
	if err != nil {
		return 0
	}
	v := top.Bucket(metaBucket).Get(countKey)
	if len(v) != 8 {
		return 0
	}
	return int(binary.BigEndian.Uint64(v))
}

// FingerprintTx returns the fingerprint last recorded under id.
func (x *BoltIndex) FingerprintTx(tx *bolt.Tx, id uint64) (Fingerprint, bool, error) {
	top, err := x.top(tx)
	if err != nil {
		return 0, false, err
	}
	v := top.Bucket(fpsBucket).Get(be64(id))
	if len(v) != 8 {
		return 0, false, nil
	}
	return Fingerprint(binary.BigEndian.Uint64(v)), true, nil
}

func (x *BoltIndex) top(tx *bolt.Tx) (*bolt.Bucket, error) {
	top := tx.Bucket(x.bucket)
	if top == nil {
		return nil, fmt.Errorf("contentseen: index bucket %q missing", x.bucket)
	}
	return top, nil
}

// near returns every stored fingerprint within k of fp, unsorted: from
// the blocks (or the tables' mirror), then the delta's mirror.
//
// The delta's view is taken before the tables are read: a merge adds its
// frozen part to the tables' mirror before it lets the delta's go, so a
// view without that part means the tables' mirror read next holds it. Read
// the other way round, a query could read the mirror before a merge's add
// and take the view after, and find the merged entries in neither.
func (x *BoltIndex) near(tx *bolt.Tx, top *bolt.Bucket, fp Fingerprint, k int) ([]Match, error) {
	v := x.delta.view(tx, top.Bucket(deltaBucket))
	if x.betweenReads != nil {
		x.betweenReads()
	}
	var ms []Match
	var err error
	if m := x.mirror(); m != nil {
		ms = memNear(m, fp, k, ms)
	} else if ms, err = x.nearBlocks(tx, top, fp, k, ms); err != nil {
		return nil, err
	}
	if v.scan {
		return scanNear(top.Bucket(deltaBucket), fp, k, ms)
	}
	for _, m := range v.parts[:v.n] {
		ms = memNear(m, fp, k, ms)
	}
	return ms, nil
}

// nearBlocks appends to ms every fingerprint of the blocks within k of fp.
func (x *BoltIndex) nearBlocks(tx *bolt.Tx, top *bolt.Bucket, fp Fingerprint, k int, ms []Match) ([]Match, error) {
	tables := top.Bucket(tablesBucket)
	if tables == nil {
		return nil, fmt.Errorf("contentseen: bucket %q/%q missing", x.bucket, tablesBucket)
	}
	c := tables.Cursor()
	e := x.layout.ProbeRadius(k)
	var lowBuf [256]uint64
	var segBuf [96]blockSegment
	segs := segBuf[:0] // the blocks to decode, found first and decoded two at a time
	var err error
	for t := range x.layout.Tables() {
		p := x.layout.Permute(t, fp)
		s := tableScan{x: x, c: c, t: t}
		if e == 0 {
			lo, hi := x.layout.prefixRange(t, p)
			if segs, err = s.segments(p, lo, hi, segs); err != nil {
				return nil, fmt.Errorf("contentseen: near %v: %w", fp, err)
			}
			continue
		}
		// Every prefix within e bits of p's, in key order so that the
		// cursor moves forwards.
		pre := x.layout.PrefixBits(t)
		lows := lowBuf[:0] // the prefixes, sorted
		for _, m := range probeMasks(pre, min(e, pre)) {
			lo, _ := x.layout.prefixRange(t, p^m)
			lows = append(lows, lo)
		}
		slices.Sort(lows)
		for _, lo := range lows {
			_, hi := x.layout.prefixRange(t, lo)
			if segs, err = s.segments(p, lo, hi, segs); err != nil {
				return nil, fmt.Errorf("contentseen: near %v: %w", fp, err)
			}
		}
	}
	if ms, err = x.scanSegments(tables, segs, k, ms); err != nil {
		return nil, fmt.Errorf("contentseen: near %v: %w", fp, err)
	}
	return ms, nil
}

// insert records a fingerprint known to be absent: in fps and the delta.
func (x *BoltIndex) insert(tx *bolt.Tx, top *bolt.Bucket, id uint64, fp Fingerprint) error {
	if x.readOnly {
		return errReadOnly // SeenTx, AddTx in a caller's write transaction
	}
	fps, delta := top.Bucket(fpsBucket), top.Bucket(deltaBucket)
	// Ids are the crawler's page sequence and delta keys a sequence too:
	// their keys only grow. (FillPercent belongs to this transaction's
	// bucket handles.)
	fps.FillPercent, delta.FillPercent = appendFill, appendFill
	if err := fps.Put(be64(id), be64(uint64(fp))); err != nil {
		return fmt.Errorf("contentseen: record %v: %w", fp, err)
	}
	if err := x.delta.record(tx, delta, id, fp); err != nil {
		return err
	}
	return addCount(top.Bucket(metaBucket), 1)
}

func addCount(meta *bolt.Bucket, n int) error {
	var c uint64
	if v := meta.Get(countKey); len(v) == 8 {
		c = binary.BigEndian.Uint64(v)
	}
	if err := meta.Put(countKey, be64(c+uint64(n))); err != nil {
		return fmt.Errorf("contentseen: update count: %w", err)
	}
	return nil
}

// appendFill is the FillPercent of the buckets whose keys only grow (fps
// and delta): their pages split nine-tenths full instead of half, which
// halves the pages each group commit leaves behind in the mapping. Not 1.0
// so that an id recorded out of order does not split a page at once.
const appendFill = 0.9

// be64 returns v as 8 big-endian bytes, so byte order is numeric order.
func be64(v uint64) []byte { return binary.BigEndian.AppendUint64(make([]byte, 0, 8), v) }
