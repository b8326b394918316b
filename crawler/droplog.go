package crawler

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/simcrawl/simcrawl/storage"
)

// reconcileDropLog makes the drop log agree with the store's list of drops,
// which is the truth: a drop-log line is written inside the transaction that
// records the drop, so a crash between the write and the commit leaves a
// line for a page that will be fetched and judged again. Lines beyond the
// store's count are cut (with any torn last line); lines missing from the
// log (a deleted log, a new drop_log path) are written again from the store.
func reconcileDropLog(ctx context.Context, path string, st *storage.Store) error {
	_, drops, err := st.Counts(ctx)
	if err != nil {
		return fmt.Errorf("crawler: count drops: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("crawler: open drop log: %w", err)
	}
	defer f.Close()
	lines, keep, err := completeLines(f, drops)
	if err != nil {
		return fmt.Errorf("crawler: read drop log %s: %w", path, err)
	}
	if err := f.Truncate(keep); err != nil {
		return fmt.Errorf("crawler: trim drop log %s: %w", path, err)
	}
	if lines < drops {
		if err := rewriteMissing(ctx, f, keep, lines, st); err != nil {
			return fmt.Errorf("crawler: restore drop log %s: %w", path, err)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("crawler: sync drop log: %w", err)
	}
	return f.Close()
}

// completeLines counts newline-terminated lines up to max and returns the
// byte offset after the last one counted.
func completeLines(r io.Reader, max int) (lines int, offset int64, err error) {
	br := bufio.NewReader(r)
	for lines < max {
		b, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return lines, offset, nil // b, if any, is a torn line
		}
		if err != nil {
			return 0, 0, err
		}
		if len(bytes.TrimSpace(b)) == 0 {
			offset += int64(len(b))
			continue
		}
		lines++
		offset += int64(len(b))
	}
	return lines, offset, nil
}

func rewriteMissing(ctx context.Context, f *os.File, at int64, skip int, st *storage.Store) error {
	if _, err := f.Seek(at, io.SeekStart); err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	i := 0
	err := st.Drops(ctx, func(d *storage.Drop) error {
		i++
		if i <= skip {
			return nil
		}
		orig, err := st.Get(ctx, d.DuplicateOf)
		if err != nil {
			return fmt.Errorf("page %d: %w", d.DuplicateOf, err)
		}
		r := storage.DropRecord{
			Time: d.FetchedAt, URL: d.URL, FinalURL: d.FinalURL, DuplicateOf: orig.URL,
			DuplicateOfID: d.DuplicateOf, Distance: d.Distance, Reason: d.Reason,
			Fingerprint: d.Fingerprint, MatchedFingerprint: d.MatchedFingerprint,
			Title: d.Title, Depth: d.Depth, Similarity: d.Similarity, Containment: d.Containment,
		}
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
