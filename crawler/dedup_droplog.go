package crawler

import (
	"fmt"
	"os"

	"github.com/simcrawl/simcrawl/storage"
)

// batchLog appends the drop-log lines of one batch transaction with one
// write and one fsync, where storage.DropLog.Write fsyncs every line (a
// millisecond each: as much as the whole transaction of a thousand
// text-only records). The lines are those DropLog writes (DropRecord's
// JSON), and a crash inside the write leaves whole lines and at most one
// torn tail, which the next Open cuts and completes from the store, as for
// DropLog. It writes to the drop log's file through its own descriptor,
// in append mode, while Dedup holds commitMu and DropLog is not used.
// A batchLog is not safe for concurrent use.
type batchLog struct {
	f   *os.File
	buf []byte
}

func openBatchLog(path string) (*batchLog, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("crawler: drop log: %w", err)
	}
	return &batchLog{f: f}, nil
}

// write appends rs, one line each, and fsyncs; nothing when rs is empty.
func (l *batchLog) write(rs []storage.DropRecord) error {
	if len(rs) == 0 {
		return nil
	}
	l.buf = l.buf[:0]
	for _, r := range rs {
		b, err := r.MarshalJSON()
		if err != nil {
			return err
		}
		l.buf = append(append(l.buf, b...), '\n')
	}
	if _, err := l.f.Write(l.buf); err != nil {
		return fmt.Errorf("write %s: %w", l.f.Name(), err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", l.f.Name(), err)
	}
	return nil
}

func (l *batchLog) close() error {
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("crawler: close drop log: %w", err)
	}
	return nil
}
