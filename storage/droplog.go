package storage

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// TimeFormat is how the drop log and the export write times: RFC 3339 in
// UTC with milliseconds, e.g. "2026-11-22T13:57:01.123Z". Readers accept
// any RFC 3339 time.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

var (
	// ErrClosed is returned by DropLog.Write after Close.
	ErrClosed = errors.New("storage: drop log closed")
	// ErrTornLine is wrapped by ReadDropLog's error for a last line that
	// has no newline and does not parse: what a crash mid-write leaves.
	ErrTornLine = errors.New("storage: torn last line")
)

// DropRecord is one line of the drop log. Its JSON form is a user-facing
// contract, field by field in this order:
//
//	time                 RFC 3339 (TimeFormat)
//	url                  requested URL of the dropped page
//	final_url            its URL after redirects
//	duplicate_of         URL of the stored page it duplicates
//	duplicate_of_id      that page's ID in the store
//	distance             Hamming distance of the fingerprints (0 for exact)
//	reason               "exact" or "near"
//	fingerprint          16 lower-case hex digits
//	matched_fingerprint  16 lower-case hex digits
//	title                title of the dropped page
//	depth                its crawl depth
//
// It is a plain value, safe to copy and read concurrently.
type DropRecord struct {
	Time                       time.Time
	URL, FinalURL, DuplicateOf string
	DuplicateOfID              uint64
	// DuplicateOfWorker names the worker of a distributed crawl whose data
	// directory holds the page DuplicateOfID; empty when it is this
	// directory's.
	DuplicateOfWorker               string
	Distance                        int
	Reason                          string
	Fingerprint, MatchedFingerprint uint64
	Title                           string
	Depth                           int
	// Similarity and Containment: the verified resemblance (Drop's
	// fields); 0 when absent from an older line.
	Similarity, Containment float64
}

// NewDropRecord is the log line for drop d of the stored page whose URL is
// duplicateOf (d.DuplicateOfURL for a page of another worker).
func NewDropRecord(d *Drop, duplicateOf string) DropRecord {
	return DropRecord{
		Time: d.FetchedAt, URL: d.URL, FinalURL: d.FinalURL,
		DuplicateOf: duplicateOf, DuplicateOfID: d.DuplicateOf, DuplicateOfWorker: d.DuplicateOfWorker,
		Distance: d.Distance, Reason: d.Reason,
		Fingerprint: d.Fingerprint, MatchedFingerprint: d.MatchedFingerprint,
		Title: d.Title, Depth: d.Depth,
		Similarity: d.Similarity, Containment: d.Containment,
	}
}

type dropRecordJSON struct {
	Time               string `json:"time"`
	URL                string `json:"url"`
	FinalURL           string `json:"final_url"`
	DuplicateOf        string `json:"duplicate_of"`
	DuplicateOfID      uint64 `json:"duplicate_of_id"`
	Distance           int    `json:"distance"`
	Reason             string `json:"reason"`
	Fingerprint        string `json:"fingerprint"`
	MatchedFingerprint string `json:"matched_fingerprint"`
	Title              string `json:"title"`
	Depth              int    `json:"depth"`
	// Added by the two-stage judge; absent in lines of older versions.
	Similarity  *float64 `json:"similarity,omitempty"`
	Containment *float64 `json:"containment,omitempty"`
	// Added by the distributed crawl: the worker whose data directory
	// holds duplicate_of_id, when it is not this one.
	DuplicateOfWorker string `json:"duplicate_of_worker,omitempty"`
}

// hex16 formats a fingerprint as the contract's 16 lower-case hex digits.
func hex16(x uint64) string { return fmt.Sprintf("%016x", x) }

func parseHex16(field, s string) (uint64, error) {
	if len(s) != 16 {
		return 0, fmt.Errorf("storage: %s %q: want 16 hex digits", field, s)
	}
	x, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("storage: %s %q: want 16 hex digits", field, s)
	}
	return x, nil
}

// appendJSON appends r as one JSON line without HTML escaping, so titles
// with & or < stay readable in the log.
func (r DropRecord) appendJSON(dst []byte) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	j := dropRecordJSON{
		Time: r.Time.UTC().Format(TimeFormat), URL: r.URL, FinalURL: r.FinalURL,
		DuplicateOf: r.DuplicateOf, DuplicateOfID: r.DuplicateOfID,
		Distance: r.Distance, Reason: r.Reason,
		Fingerprint: hex16(r.Fingerprint), MatchedFingerprint: hex16(r.MatchedFingerprint),
		Title: r.Title, Depth: r.Depth, DuplicateOfWorker: r.DuplicateOfWorker,
	}
	if r.Similarity > 0 || r.Containment > 0 {
		sim, cont := round3(r.Similarity), round3(r.Containment)
		j.Similarity, j.Containment = &sim, &cont
	}
	err := enc.Encode(j)
	if err != nil {
		return dst, fmt.Errorf("storage: encode drop record: %w", err)
	}
	return append(dst, buf.Bytes()...), nil // Encode ends with '\n'
}

// MarshalJSON writes the contract's field names with hex fingerprints.
func (r DropRecord) MarshalJSON() ([]byte, error) {
	b, err := r.appendJSON(nil)
	return bytes.TrimSuffix(b, []byte("\n")), err
}

// UnmarshalJSON reads what MarshalJSON writes. Unknown fields are ignored,
// so a later version may add some.
func (r *DropRecord) UnmarshalJSON(b []byte) error {
	var j dropRecordJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	t, err := time.Parse(time.RFC3339, j.Time)
	if err != nil {
		return fmt.Errorf("storage: time: %w", err)
	}
	fp, err := parseHex16("fingerprint", j.Fingerprint)
	if err != nil {
		return err
	}
	mfp, err := parseHex16("matched_fingerprint", j.MatchedFingerprint)
	if err != nil {
		return err
	}
	*r = DropRecord{
		Time: t, URL: j.URL, FinalURL: j.FinalURL, DuplicateOf: j.DuplicateOf,
		DuplicateOfID: j.DuplicateOfID, Distance: j.Distance, Reason: j.Reason,
		Fingerprint: fp, MatchedFingerprint: mfp, Title: j.Title, Depth: j.Depth,
		DuplicateOfWorker: j.DuplicateOfWorker,
	}
	if j.Similarity != nil {
		r.Similarity = *j.Similarity
	}
	if j.Containment != nil {
		r.Containment = *j.Containment
	}
	return nil
}

// round3 rounds a resemblance to 3 decimals for the log: the estimates are
// good to about 0.03, more digits would only be noise.
func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// DropLog appends DropRecords to a JSON Lines file. It is safe for
// concurrent use: mu serialises writes, so lines never interleave.
type DropLog struct {
	path string
	torn int64 // bytes of a torn last line cut off by OpenDropLog

	mu     sync.Mutex // guards f and closed
	f      *os.File
	closed bool
}

// OpenDropLog opens path for appending, creating it and its parent
// directories. A torn last line (no newline: a crash hit a Write) is cut
// off first, so the next line does not get glued to it; the crawler
// re-drops that page anyway, since it was not marked done. TornBytes says
// how much was cut.
func OpenDropLog(path string) (*DropLog, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("storage: drop log dir: %w", err)
	}
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("storage: open drop log: %w", err)
	}
	l := &DropLog{path: path, f: f}
	if l.torn, err = cutTornTail(f); err != nil {
		return nil, errors.Join(fmt.Errorf("storage: drop log %s: %w", path, err), f.Close())
	}
	if errors.Is(statErr, os.ErrNotExist) {
		// fsync the directory so the new file's name survives a crash too.
		if err := syncDir(dir); err != nil {
			return nil, errors.Join(fmt.Errorf("storage: drop log %s: %w", path, err), f.Close())
		}
	}
	return l, nil
}

// cutTornTail truncates f after its last newline and returns how many bytes
// it removed.
func cutTornTail(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()
	buf := make([]byte, 4096)
	end := size
	for end > 0 {
		n := int64(len(buf))
		if end < n {
			n = end
		}
		if _, err := f.ReadAt(buf[:n], end-n); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			end = end - n + int64(i) + 1
			break
		}
		end -= n
	}
	if end == size {
		return 0, nil
	}
	if err := f.Truncate(end); err != nil {
		return 0, err
	}
	if err := f.Sync(); err != nil {
		return 0, err
	}
	return size - end, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// Path is the file the log writes to.
func (l *DropLog) Path() string { return l.path }

// TornBytes is the size of the torn last line OpenDropLog cut off (0 if
// none).
func (l *DropLog) TornBytes() int64 { return l.torn }

// Write appends r as one line and fsyncs before returning, so a line the
// crawler has seen written survives a crash. A zero r.Time is set to now.
// Cost: one write and one fsync (about a millisecond on an SSD, more on
// disks); concurrent writers queue behind one another.
func (l *DropLog) Write(r DropRecord) error {
	if r.Reason != ReasonExact && r.Reason != ReasonNear {
		return fmt.Errorf("storage: drop log %s: reason %q is neither %q nor %q", r.URL, r.Reason, ReasonExact, ReasonNear)
	}
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	line, err := r.appendJSON(nil)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	// One write call per line: with O_APPEND the line lands whole at the
	// end, or (crash) as a torn tail that OpenDropLog cuts off.
	if _, err := l.f.Write(line); err != nil {
		return fmt.Errorf("storage: write drop log: %w", err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("storage: sync drop log: %w", err)
	}
	return nil
}

// Close closes the file; later Writes return ErrClosed. Closing twice is
// not an error.
func (l *DropLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("storage: close drop log: %w", err)
	}
	return nil
}

// ReadDropLog calls fn for each record of a drop log, in file order. Blank
// lines are skipped. A complete line that does not parse is an error
// naming its line number. A last line without a newline is accepted if it
// parses; if not, it is what a crash mid-Write leaves: every complete record
// has been delivered by then, and the error, naming the line, wraps
// ErrTornLine, so a tool may accept it with errors.Is. An error from fn is
// returned as is.
func ReadDropLog(r io.Reader, fn func(DropRecord) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return fmt.Errorf("storage: drop log line %d: %w", n, err)
		}
		complete := err == nil
		if t := bytes.TrimSpace(line); len(t) > 0 {
			var rec DropRecord
			if perr := json.Unmarshal(t, &rec); perr != nil {
				if !complete {
					return fmt.Errorf("storage: drop log line %d: %w (%v)", n, ErrTornLine, perr)
				}
				return fmt.Errorf("storage: drop log line %d: %w", n, perr)
			}
			if ferr := fn(rec); ferr != nil {
				return ferr
			}
		}
		if !complete {
			return nil
		}
	}
}
