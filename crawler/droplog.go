package crawler

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/simcrawl/simcrawl/storage"
)

// ErrDropLogMismatch is wrapped by Open's error, and by CheckReport.Err,
// when the drop log does not list the store's drops in order: lines were
// deleted, edited or added. The store is sound; nothing was changed.
var ErrDropLogMismatch = errors.New("crawler: drop log disagrees with the store")

// dropLogMismatch is the error for the drop log at path, of the data
// directory dir, that disagrees with the store as what says. The commands
// it suggests name dir, so they can be run as printed.
func dropLogMismatch(dir, path, what string) error {
	return fmt.Errorf("%w: %s: %s; nothing was changed. `crawl check --data %s` compares them; "+
		"`crawl repair --data %s --out NEWDIR` writes a directory whose drop log is rewritten from the store "+
		"(or move this log away and the crawl writes it again from the store)", ErrDropLogMismatch, path, what, dir, dir)
}

// reconcileDropLog checks the drop log against the store's drops, which
// are the truth, line by line: line i must be drop i (same URL and
// fingerprint). A drop-log line is written right after the commit that
// records the drop, so a crash leaves the log a prefix of the store's drops,
// possibly ending in a torn line (no newline, not JSON): the torn line is
// cut and the missing drops are appended from the store. That is the only
// change it ever makes. A log that is not such a prefix (a deleted, edited
// or foreign line, or more lines than drops) is left as it is and the error
// wraps ErrDropLogMismatch, naming the first line that differs.
func reconcileDropLog(ctx context.Context, dir, path string, st *storage.Store) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("crawler: open drop log: %w", err)
	}
	defer f.Close()
	m, err := matchDropLog(ctx, f, st)
	if err != nil {
		return fmt.Errorf("crawler: drop log %s: %w", path, err)
	}
	if m.problem != "" {
		return dropLogMismatch(dir, path, m.problem)
	}
	if m.torn == 0 && m.missing == 0 {
		return nil
	}
	if m.torn > 0 {
		if err := f.Truncate(m.keep); err != nil {
			return fmt.Errorf("crawler: cut torn last line of drop log %s: %w", path, err)
		}
	}
	if m.missing > 0 {
		if err := rewriteMissing(ctx, f, m.keep, m.lines, st); err != nil {
			return fmt.Errorf("crawler: restore drop log %s: %w", path, err)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("crawler: sync drop log: %w", err)
	}
	return f.Close()
}

// logMatch is how a drop log compares with the store.
type logMatch struct {
	lines   int    // complete lines matching the store's first drops
	keep    int64  // bytes of the file up to and including them
	torn    int64  // bytes of a torn last line after them
	missing int    // store drops after the matched lines
	problem string // why the log is not a prefix of the store's drops, "" if it is
}

// matchDropLog reads r (a drop log) along the store's drops, streaming
// both: memory is one line and one chunk of drop headers.
func matchDropLog(ctx context.Context, r io.Reader, st *storage.Store) (logMatch, error) {
	var m logMatch
	br := bufio.NewReaderSize(r, 64<<10)
	eof := false
	lineNo := 0
	// next returns the next non-blank line, whether it ended in a newline,
	// or nil at the end of the file.
	next := func() ([]byte, bool, error) {
		for !eof {
			b, err := br.ReadBytes('\n')
			if errors.Is(err, io.EOF) {
				eof = true
			} else if err != nil {
				return nil, false, err
			}
			lineNo++
			if len(bytes.TrimSpace(b)) == 0 {
				if !eof {
					m.keep += int64(len(b))
				} else {
					m.torn = int64(len(b))
				}
				continue
			}
			return b, !eof, nil
		}
		return nil, false, nil
	}
	stop := errors.New("stop")
	i := 0
	err := st.DropHeaders(ctx, func(d *storage.Drop) error {
		i++
		if m.missing > 0 {
			m.missing++
			return nil
		}
		b, complete, err := next()
		if err != nil {
			return err
		}
		if b == nil {
			m.missing = 1
			return nil
		}
		var rec storage.DropRecord
		perr := json.Unmarshal(bytes.TrimSpace(b), &rec)
		if !complete && perr != nil {
			m.torn, m.missing = int64(len(b)), 1 // a crash cut this line
			return nil
		}
		switch {
		case perr != nil:
			m.problem = fmt.Sprintf("line %d is not a drop record (%v); the store's drop %d is %s", lineNo, perr, i, d.URL)
		case rec.URL != d.URL || rec.Fingerprint != d.Fingerprint:
			m.problem = fmt.Sprintf("line %d is %s (fingerprint %016x), but the store's drop %d is %s (fingerprint %016x): lines were deleted, added or edited",
				lineNo, rec.URL, rec.Fingerprint, i, d.URL, d.Fingerprint)
		case !complete:
			// Whole but without its newline: cut it and write it again.
			m.torn, m.missing = int64(len(b)), 1
			return nil
		default:
			m.lines++
			m.keep += int64(len(b))
			return nil
		}
		return stop
	})
	if err != nil && !errors.Is(err, stop) {
		return m, fmt.Errorf("read the store's drops: %w", err)
	}
	if m.problem != "" || m.missing > 0 {
		return m, nil
	}
	// Every drop has its line; anything after them is not the store's.
	b, complete, err := next()
	if err != nil {
		return m, err
	}
	if b != nil {
		var rec storage.DropRecord
		if !complete && json.Unmarshal(bytes.TrimSpace(b), &rec) != nil {
			m.torn = int64(len(b)) // a torn line of a drop whose commit failed
			return m, nil
		}
		m.problem = fmt.Sprintf("line %d (%.80s) follows the line of the store's last drop (%d): the log has lines the store does not",
			lineNo, bytes.TrimSpace(b), i)
	}
	return m, nil
}

func rewriteMissing(ctx context.Context, f *os.File, at int64, skip int, st *storage.Store) error {
	if _, err := f.Seek(at, io.SeekStart); err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	i := 0
	err := st.DropHeaders(ctx, func(d *storage.Drop) error {
		i++
		if i <= skip {
			return nil
		}
		keptURL := d.DuplicateOfURL // another worker's page: the drop names it
		if keptURL == "" {
			orig, err := st.Get(ctx, d.DuplicateOf)
			if err != nil {
				return fmt.Errorf("page %d: %w", d.DuplicateOf, err)
			}
			keptURL = orig.URL
		}
		r := storage.NewDropRecord(d, keptURL)
		b, err := r.MarshalJSON()
		if err != nil {
			return err
		}
		if _, err := w.Write(append(b, '\n')); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	return w.Flush()
}

// ErrLostStore is wrapped by Open's error when the data directory's drop
// log has lines but crawl.db is missing or empty.
var ErrLostStore = errors.New("crawler: drop log without a store")

// RefuseLostStore returns an error wrapping ErrLostStore for a data
// directory whose crawl.db is missing or 0 bytes while its drop log has
// lines: the store was deleted or lost (a failed copy, a full disk), and a
// new crawl there would make the log and the store disagree from its first
// line. A crawl refuses to start on it and crawl check reports it; a
// directory with neither holds no crawl. Nothing is touched.
func RefuseLostStore(dir, dropLog string) error {
	if dropLog == "" {
		dropLog = DefaultDropLog(dir)
	}
	path := filepath.Join(dir, DBFile)
	st, err := os.Stat(path)
	switch {
	case err == nil && st.Size() > 0:
		return nil
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("crawler: %w", err)
	}
	what := "is missing"
	if err == nil {
		what = "is empty (0 bytes)"
	}
	lines, err := countLines(dropLog)
	if err != nil || lines == 0 {
		return err
	}
	return fmt.Errorf("%w: %s %s but the drop log %s has %d line%s, so this directory held a crawl whose store is lost; "+
		"nothing was changed. Restore crawl.db from a backup, or crawl into a new --data directory (move the drop log away first to reuse this one)",
		ErrLostStore, path, what, dropLog, lines, plural(lines))
}

// countLines counts the non-blank lines of the file at path, 0 when it
// does not exist.
func countLines(path string) (int, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("crawler: drop log: %w", err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			n++
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("crawler: drop log %s: %w", path, err)
	}
	return n, nil
}
