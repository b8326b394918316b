package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/storage"
)

// `crawl index build` and `crawl index join`: the bulk forms of ContentSeen
// for indexes too large to fill page by page. Both read fingerprints from
// a fingerprint file (one per line: 16 hex digits, optionally whitespace
// and a decimal id; the line number is the id when none is given; blank and
// # lines skipped) or from a data directory's store (the non-thin pages,
// under their page IDs).

func (m *Main) runIndex(ctx context.Context, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "build":
			return m.runIndexBuild(ctx, args[1:])
		case "join":
			return m.runIndexJoin(ctx, args[1:])
		case "migrate":
			return m.runIndexMigrate(ctx, args[1:])
		}
	}
	if len(args) == 0 {
		return &usageError{cmd: "index", err: errors.New("index: want a subcommand: build, join or migrate")}
	}
	if !isHelpFlag(args[0]) {
		guess := ""
		if s := suggest(args[0], subcommands["index"]); s != "" {
			guess = fmt.Sprintf("; did you mean %q?", "index "+s)
		}
		return &usageError{cmd: "index", err: fmt.Errorf("index: unknown subcommand %q (want build, join or migrate)%s", args[0], guess)}
	}
	// Help: every subcommand's usage and flags.
	for _, run := range []func(context.Context, []string) error{m.runIndexBuild, m.runIndexJoin, m.runIndexMigrate} {
		if err := run(ctx, []string{"-h"}); !errors.Is(err, flag.ErrHelp) {
			return err
		}
		fmt.Fprintln(m.Stderr)
	}
	return flag.ErrHelp
}

// indexFlagSet is newFlagSet for a subcommand of index.
func (m *Main) indexFlagSet(sub, synopsis, summary string) *flag.FlagSet {
	fs := flag.NewFlagSet("index "+sub, flag.ContinueOnError)
	fs.SetOutput(m.flagOutput(fs))
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: crawl index %s %s\n\n%s\n\nFlags:\n", sub, synopsis, summary)
		fs.PrintDefaults()
	}
	return fs
}

// runIndexBuild writes a new standalone index file in one sorted pass
// (BoltIndex.AddBatch). It never writes into a data directory: the crawl
// keeps its own index page by page in crawl.db, and a rebuilt file there
// would have to agree with its store; a standalone file cannot.
func (m *Main) runIndexBuild(ctx context.Context, args []string) (err error) {
	fset := m.indexFlagSet("build", "[--from DATA|FILE] [--data DIR] --out FILE [--layout NAME]",
		"build a new standalone index file in one sorted pass, from a fingerprint file or a data directory's stored pages")
	from := fset.String("from", "", "fingerprint file, or a data directory whose stored pages to index\n(default: the data directory of --data or the config)")
	out := fset.String("out", "", "the index file to create (required; must not exist)")
	layoutName := fset.String("layout", "", "table layout: 4x16, 10x28, google16 or k<k>/<widths>/lead<n>\n(default: the data directory's, else 4x16)")
	var cf configFlags
	m.addConfigFlags(fset, &cf)
	if err := fset.Parse(args); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		return usageErrorf(fset, "index build: unexpected argument %q", fset.Arg(0))
	}
	if *out == "" {
		return usageErrorf(fset, "index build: --out FILE is required")
	}
	if *layoutName != "" {
		if _, err := contentseen.LayoutByName(*layoutName); err != nil {
			return usageErrorf(fset, "index build: --layout: %v", err)
		}
	}
	if _, err := os.Stat(*out); err == nil {
		return fmt.Errorf("index build: %s exists; remove it or choose another --out", *out)
	}
	src := *from
	if src == "" {
		cfg, err := cf.load()
		if err != nil {
			return err
		}
		src = cfg.Data
		if _, err := os.Stat(src); errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("index build: no data directory %s: give --from FILE|DATA, or --data DIR", src)
		}
	}

	start := time.Now()
	in, err := readFingerprints(ctx, src)
	if err != nil {
		return fmt.Errorf("index build: %w", err)
	}
	name := *layoutName
	if name == "" {
		name = in.layout
	}
	if name == "" {
		name = contentseen.Layout4x16
	}
	layout, err := contentseen.LayoutByName(name)
	if err != nil {
		return fmt.Errorf("index build: %w", err)
	}
	read := time.Since(start)

	x, err := contentseen.OpenBolt(*out, contentseen.BoltOptions{Layout: layout, Scheme: in.scheme, NoSync: true})
	if err != nil {
		return fmt.Errorf("index build: %w", err)
	}
	err = x.AddBatch(ctx, in.ids, in.fps)
	if cerr := x.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("index build: %w", err)
	}
	fmt.Fprintf(m.Stderr, "indexed %d fingerprint%s from %s into %s (layout %s) in %v (reading %v)\n",
		len(in.fps), plural(len(in.fps)), src, *out, layout.Name(),
		time.Since(start).Round(time.Millisecond), read.Round(time.Millisecond))
	return nil
}

// pairJSON is one line of `crawl index join --json`.
type pairJSON struct {
	BatchID  uint64 `json:"batch_id"`
	StoredID uint64 `json:"stored_id"`
	Distance int    `json:"distance"`
}

// runIndexJoin reports every (batch, stored) pair within k: the batch's
// tables are built in memory. When the stored set is an index (an index
// file or a data directory's) with the same layout, each table is joined
// with the index's table by one sorted merge (BoltIndex.JoinUnits, units
// on one worker per CPU): output is table by table, in each by the stored
// entry's permuted value. Otherwise the stored fingerprints are streamed through
// the tables in partitions, one worker per CPU: output is in stored order.
func (m *Main) runIndexJoin(ctx context.Context, args []string) (err error) {
	fset := m.indexFlagSet("join", "--batch FILE|INDEX|DATA --stored FILE|INDEX|DATA [--k N] [--layout NAME] [--json]",
		"print every (batch id, stored id, distance) within k: tables over the batch, the stored set streamed through them\n"+
			"(pairs in stored order), or, when --stored is an index with this layout, merged with the index's tables\n"+
			"(pairs table by table, not in stored order)")
	batchPath := fset.String("batch", "", "fingerprint file, index file (from index build) or data directory of the batch (required)")
	storedPath := fset.String("stored", "", "fingerprint file, index file (from index build) or data directory of the stored set (required)")
	k := fset.Int("k", 3, "report pairs within k bits: at most what the layout joins (3 for 4x16, 10x28 and google16; K for k<K>/<widths>/lead<n>)")
	layoutName := fset.String("layout", "", "table layout over the batch: 4x16, 10x28, google16 or k<k>/<widths>/lead<n>\n(default: the stored index's, so that the join merges with it; else 4x16)")
	asJSON := fset.Bool("json", false, `JSON Lines: {"batch_id","stored_id","distance"}`)
	if err := fset.Parse(args); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		return usageErrorf(fset, "index join: unexpected argument %q", fset.Arg(0))
	}
	if *batchPath == "" || *storedPath == "" {
		return usageErrorf(fset, "index join: --batch FILE|INDEX|DATA and --stored FILE|INDEX|DATA are required")
	}
	storedLayout, err := indexLayout(*storedPath)
	if err != nil {
		return fmt.Errorf("index join: stored: %w", err)
	}
	// The stored index's layout serves only a k it finds every match for.
	storedK := -1
	if l, err := contentseen.LayoutByName(storedLayout); err == nil {
		storedK = l.K()
	}
	name := *layoutName
	if name == "" {
		name = contentseen.Layout4x16
		if storedK >= *k {
			name = storedLayout
		}
	}
	layout, err := contentseen.LayoutByName(name)
	if err != nil {
		return usageErrorf(fset, "index join: --layout: %v", err)
	}
	// Checked before the batch is read: a k the layout cannot join is a
	// mistake in the command line, not a failure of the join.
	if *k < 0 || *k > layout.K() {
		return usageErrorf(fset, "index join: --k %d: layout %s finds every pair only within 0..%d bits; "+
			"a generated layout k<K>/<widths>/lead<L> joins within K (e.g. --layout k5/11-11-11-11-10-10/lead1 for k up to 5)",
			*k, layout.Name(), layout.K())
	}
	batch, err := readFingerprints(ctx, *batchPath)
	if err != nil {
		return fmt.Errorf("index join: batch: %w", err)
	}
	j, err := contentseen.NewJoiner(layout, *k, batch.ids, batch.fps)
	if err != nil {
		return fmt.Errorf("index join: %w", err)
	}

	bw := bufio.NewWriterSize(m.Stdout, 1<<16)
	enc := json.NewEncoder(bw)
	var line []byte
	n := 0
	emit := func(p contentseen.Pair) error {
		n++
		if *asJSON {
			return enc.Encode(pairJSON{BatchID: p.BatchID, StoredID: p.StoredID, Distance: p.Distance})
		}
		line = strconv.AppendUint(line[:0], p.BatchID, 10)
		line = append(line, ' ')
		line = strconv.AppendUint(line, p.StoredID, 10)
		line = append(line, ' ')
		line = strconv.AppendInt(line, int64(p.Distance), 10)
		line = append(line, '\n')
		_, err := bw.Write(line)
		return err
	}

	how := "streamed"
	switch {
	case storedLayout == "" || storedLayout == layout.Name():
	case storedK >= *k:
		how = fmt.Sprintf("streamed: the stored index has layout %s, the batch's tables %s; --layout %s would merge", storedLayout, layout.Name(), storedLayout)
	default:
		how = fmt.Sprintf("streamed: the stored index's layout %s finds matches only within %d bits", storedLayout, storedK)
	}
	counted, merged, err := joinStoredIndex(ctx, *storedPath, j, emit)
	if err == nil && merged {
		how = "merged with the stored index's tables"
	}
	if err == nil && !merged {
		counted, err = joinStoredStream(ctx, *storedPath, j, emit)
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return fmt.Errorf("index join: %w", err)
	}
	fmt.Fprintf(m.Stderr, "%d pair%s within %d bits: %d batch × %d stored fingerprints (%s)\n",
		n, plural(n), *k, len(batch.fps), counted, how)
	return nil
}

// indexLayout returns the layout of the index kept at path (an index file
// or a data directory's, in the current format), or "" when path holds
// none: a fingerprint file, an index in an older format.
func indexLayout(path string) (layout string, err error) {
	db, err := openIndexDB(path)
	if err != nil || db == nil {
		return "", err
	}
	defer func() {
		if cerr := db.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	err = db.View(func(tx *bolt.Tx) error {
		name, _, ok := contentseen.ReadBoltMeta(tx, "")
		if _, current := contentseen.BoltFormatTx(tx, ""); ok && current {
			layout = name
		}
		return nil
	})
	return layout, err
}

// openIndexDB opens the bbolt file that keeps an index at path: an index
// file, read-only, or a data directory's. It returns nil and no error when
// path is neither (a fingerprint file).
func openIndexDB(path string) (*bolt.DB, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	switch {
	case st.IsDir():
		d, err := crawler.OpenData(path, 0)
		if err != nil {
			return nil, err
		}
		return d.DB, nil
	case isBoltFile(path):
		db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
		if err != nil {
			return nil, fmt.Errorf("open index file %s: %w", path, err)
		}
		return db, nil
	}
	return nil, nil
}

// wrapNonNil prefixes err with what, keeping nil nil.
func wrapNonNil(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// joinStoredStream streams the stored input through j in partitions, one
// worker per CPU, and returns how many stored fingerprints it read.
func joinStoredStream(ctx context.Context, path string, j *contentseen.Joiner, emit func(contentseen.Pair) error) (counted int, err error) {
	workers := runtime.GOMAXPROCS(0)
	parts, count, closeParts, err := storedPartitions(ctx, path, 4*workers)
	if err != nil {
		return 0, fmt.Errorf("stored: %w", err)
	}
	defer func() {
		if cerr := closeParts(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	if err := contentseen.JoinPartitions(ctx, j, parts, workers, emit); err != nil {
		return 0, err
	}
	return count(), nil
}

// joinStoredIndex joins j with the index kept at path (an index file, or
// a data directory's) if it has j's layout, and returns the number of
// fingerprints the index records. The join's units run on one worker per
// CPU, each in its own read transaction, and their pairs are emitted in
// unit order (JoinTx's order). merged is false, and nothing is emitted,
// when path holds no such index (a fingerprint file, another layout, an
// index in an older format, or an empty one: a crawl with ContentSeen off
// stores pages without indexing them).
//
// A data directory's index records the pages stored in full while
// ContentSeen was on, one id per distinct fingerprint, which are the
// stored pages the streamed path reads unless the crawl ran with
// ContentSeen off for a while or stored exact duplicates.
func joinStoredIndex(ctx context.Context, path string, j *contentseen.Joiner, emit func(contentseen.Pair) error) (counted int, merged bool, err error) {
	db, err := openIndexDB(path)
	if err != nil || db == nil {
		return 0, false, wrapNonNil("stored", err)
	}
	defer func() {
		if cerr := db.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("stored: %w", cerr)
		}
	}()
	var layout, scheme string
	var ok, current bool
	err = db.View(func(tx *bolt.Tx) error {
		layout, scheme, ok = contentseen.ReadBoltMeta(tx, "")
		_, current = contentseen.BoltFormatTx(tx, "")
		return nil
	})
	if err != nil || !ok || !current || layout != j.Layout().Name() {
		return 0, false, err
	}
	x, err := contentseen.NewBoltIndex(db, contentseen.BoltOptions{Layout: j.Layout(), Scheme: scheme})
	if err != nil {
		return 0, false, fmt.Errorf("stored: %w", err)
	}
	defer func() {
		if cerr := x.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("stored: %w", cerr)
		}
	}()
	if err := db.View(func(tx *bolt.Tx) error { counted = x.LenTx(tx); return nil }); err != nil || counted == 0 {
		return 0, false, err
	}
	us, err := x.JoinUnits(j)
	if err != nil {
		return 0, false, err
	}
	// The database is open read-only, so no writer can change the index
	// between the units' transactions: they all read one snapshot.
	err = contentseen.MapMerge(ctx, len(us), runtime.GOMAXPROCS(0), func(ctx context.Context, i int) (ps []contentseen.Pair, err error) {
		err = db.View(func(tx *bolt.Tx) error {
			ps, err = x.JoinUnitTx(ctx, tx, j, us[i], nil)
			return err
		})
		return ps, err
	}, emit)
	return counted, true, err
}

// fingerprints is an input read whole, with what its source records about
// how it was made (empty for a fingerprint file).
type fingerprints struct {
	ids            []uint64
	fps            []contentseen.Fingerprint
	layout, scheme string
}

// readFingerprints reads a fingerprint file, the stored pages of a data
// directory when path is a directory, or the fingerprints of an index file
// (written by crawl index build).
func readFingerprints(ctx context.Context, path string) (fingerprints, error) {
	st, err := os.Stat(path)
	if err != nil {
		return fingerprints{}, err
	}
	if st.IsDir() {
		return readDataFingerprints(ctx, path)
	}
	if isBoltFile(path) {
		return readIndexFileFingerprints(path)
	}
	return readFingerprintFile(ctx, path)
}

// isBoltFile reports whether path starts like a bbolt database (its first
// page's meta magic), as an index file from crawl index build does.
func isBoltFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close() // read-only
	var head [20]byte
	if _, err := io.ReadFull(f, head[:]); err != nil {
		return false
	}
	const boltMagic = 0xED0CDAED // bbolt's meta magic, after a 16-byte page header
	return binary.LittleEndian.Uint32(head[16:]) == boltMagic
}

// readIndexFileFingerprints returns every (id, fingerprint) an index file
// records, with its layout and scheme, reading it read-only.
func readIndexFileFingerprints(path string) (in fingerprints, err error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return in, fmt.Errorf("open index file %s: %w", path, err)
	}
	defer func() {
		if cerr := db.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	err = db.View(func(tx *bolt.Tx) error {
		var ok bool
		if in.layout, in.scheme, ok = contentseen.ReadBoltMeta(tx, ""); !ok {
			return fmt.Errorf("%s is a bbolt file without an index", path)
		}
		return contentseen.ScanBoltTx(tx, "", func(id uint64, fp contentseen.Fingerprint) error {
			in.ids, in.fps = append(in.ids, id), append(in.fps, fp)
			return nil
		})
	})
	return in, err
}

// readDataFingerprints returns the fingerprints of the data directory's
// non-thin stored pages, under their page IDs, with the layout and scheme
// its index records.
func readDataFingerprints(ctx context.Context, dir string) (in fingerprints, err error) {
	d, err := crawler.OpenData(dir, 0)
	if err != nil {
		return in, err
	}
	defer func() {
		if cerr := d.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	err = d.DB.View(func(tx *bolt.Tx) error {
		in.layout, in.scheme, _ = contentseen.ReadBoltMeta(tx, "")
		return nil
	})
	if err != nil {
		return in, err
	}
	err = d.Store.PageHeaders(ctx, func(p *storage.Page) error {
		if !p.Thin {
			in.ids = append(in.ids, p.ID)
			in.fps = append(in.fps, contentseen.Fingerprint(p.Fingerprint))
		}
		return nil
	})
	return in, err
}

// readFingerprintFile reads a whole fingerprint file.
func readFingerprintFile(ctx context.Context, path string) (fingerprints, error) {
	f, err := os.Open(path)
	if err != nil {
		return fingerprints{}, err
	}
	defer f.Close() // read-only: a close error loses nothing
	src := newFileSource(f, path, 0, 1<<62, 1)
	var in fingerprints
	if st, err := f.Stat(); err == nil {
		// Lines are at least 17 bytes: size the slices once.
		n := int(min(st.Size()/17+1, 1<<28))
		in.ids, in.fps = make([]uint64, 0, n), make([]contentseen.Fingerprint, 0, n)
	}
	for n := 0; ; n++ {
		if n%65536 == 0 {
			if err := ctx.Err(); err != nil {
				return in, err
			}
		}
		id, fp, err := src.Next()
		if err == io.EOF {
			return in, nil
		}
		if err != nil {
			return in, err
		}
		in.ids = append(in.ids, id)
		in.fps = append(in.fps, fp)
	}
}

// storedPartitions cuts the stored input into about n partitions: byte
// ranges of a fingerprint file starting at line boundaries (each knowing
// its first line number, for ids), or slices of a data directory's
// fingerprints. counted returns how many fingerprints the partitions
// yielded, once the join is over.
func storedPartitions(ctx context.Context, path string, n int) (parts []contentseen.FingerprintSource, counted func() int, closeAll func() error, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, nil, err
	}
	if st.IsDir() || isBoltFile(path) {
		in, err := readFingerprints(ctx, path)
		if err != nil {
			return nil, nil, nil, err
		}
		return contentseen.SplitSlices(in.ids, in.fps, n), func() int { return len(in.fps) }, func() error { return nil }, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, err
	}
	closeAll = f.Close
	starts, lines, err := lineSplits(f, st.Size(), n)
	if err != nil {
		return nil, nil, nil, errors.Join(err, f.Close())
	}
	var srcs []*fileSource
	for i := range starts {
		end := st.Size()
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		s := newFileSource(f, path, starts[i], end, lines[i])
		srcs = append(srcs, s)
		parts = append(parts, s)
	}
	counted = func() int {
		c := 0
		for _, s := range srcs {
			c += s.count
		}
		return c
	}
	return parts, counted, closeAll, nil
}

// lineSplits returns up to n offsets in f (of size size), each at the start
// of a line, splitting it into parts of about equal bytes, and the line
// number of each (counting newlines in one pass over the file).
func lineSplits(f *os.File, size int64, n int) (starts []int64, lines []int, err error) {
	starts = []int64{0}
	buf := make([]byte, 1<<20)
	for i := 1; i < n; i++ {
		// The first line starting at or after the target.
		off := max(size*int64(i)/int64(n)-1, starts[len(starts)-1])
		for off < size {
			m, err := f.ReadAt(buf[:4096], off)
			if err != nil && err != io.EOF {
				return nil, nil, err
			}
			if nl := bytes.IndexByte(buf[:m], '\n'); nl >= 0 {
				off += int64(nl) + 1
				break
			}
			off += int64(m)
		}
		if off < size && off > starts[len(starts)-1] {
			starts = append(starts, off)
		}
	}
	lines = make([]int, len(starts))
	lines[0] = 1
	line, next := 1, 1
	for off := int64(0); off < size && next < len(starts); {
		m, err := f.ReadAt(buf, off)
		if err != nil && err != io.EOF {
			return nil, nil, err
		}
		chunk := buf[:m]
		for next < len(starts) && starts[next] <= off+int64(m) {
			cut := starts[next] - off
			lines[next] = line + bytes.Count(chunk[:cut], []byte{'\n'})
			next++
		}
		line += bytes.Count(chunk, []byte{'\n'})
		off += int64(m)
	}
	return starts, lines, nil
}

// fileSource reads the fingerprint lines in [start, end) of a file. It is
// a contentseen.FingerprintSource, for one goroutine.
type fileSource struct {
	path  string
	r     *bufio.Reader
	line  int // number of the next line
	count int // fingerprints returned
}

func newFileSource(f *os.File, path string, start, end int64, firstLine int) *fileSource {
	return &fileSource{path: path, r: bufio.NewReaderSize(io.NewSectionReader(f, start, end-start), 1<<16), line: firstLine}
}

// Next returns the next fingerprint line's id and fingerprint, skipping
// blank lines and comments (lines starting with #, as in a seeds file);
// both count as lines for the ids. A malformed line is an error naming
// the file and line.
func (s *fileSource) Next() (uint64, contentseen.Fingerprint, error) {
	for {
		b, err := s.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			return 0, 0, fmt.Errorf("%s:%d: line longer than %d bytes", s.path, s.line, s.r.Size())
		}
		if err != nil && err != io.EOF {
			return 0, 0, fmt.Errorf("%s: %w", s.path, err)
		}
		if len(b) == 0 && err == io.EOF {
			return 0, 0, io.EOF
		}
		n := s.line
		s.line++
		b = bytes.TrimSpace(b)
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		id, fp, perr := parseFingerprintLine(b, uint64(n))
		if perr != nil {
			return 0, 0, fmt.Errorf("%s:%d: %w", s.path, n, perr)
		}
		s.count++
		return id, fp, nil
	}
}

// parseFingerprintLine parses "<16 hex digits>[ <id>]" (b trimmed);
// lineNo is the id when the line gives none.
func parseFingerprintLine(b []byte, lineNo uint64) (uint64, contentseen.Fingerprint, error) {
	hex := b
	var rest []byte
	if i := bytes.IndexAny(b, " \t"); i >= 0 {
		hex, rest = b[:i], bytes.TrimLeft(b[i:], " \t")
	}
	if len(hex) != 16 {
		if len(b) > 60 {
			b = append(b[:60:60], "..."...) // a binary file's "line" can be megabytes
		}
		return 0, 0, fmt.Errorf("want 16 hex digits, optionally whitespace and an id; got %q", b)
	}
	var v uint64
	bad := byte(0)
	for _, c := range hex { // a table, not a switch: random digits defeat branch prediction
		d := hexValue[c]
		bad |= d
		v = v<<4 | uint64(d&0xf)
	}
	if bad&0x80 != 0 {
		return 0, 0, fmt.Errorf("bad hex digit in %q", hex)
	}
	if len(rest) == 0 {
		return lineNo, contentseen.Fingerprint(v), nil
	}
	id, err := strconv.ParseUint(string(rest), 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("bad id %q: want a decimal number", rest)
	}
	return id, contentseen.Fingerprint(v), nil
}

// hexValue maps a hex digit to its value and anything else to 0x80.
var hexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0x80
	}
	for i := range byte(10) {
		t['0'+i] = i
	}
	for i := range byte(6) {
		t['a'+i], t['A'+i] = 10+i, 10+i
	}
	return t
}()
