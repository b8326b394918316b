package main

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/storage"
	"github.com/simcrawl/simcrawl/warc"
)

// Input formats of `crawl dedup --format`.
const (
	formatAuto  = "auto"
	formatHTML  = "html"
	formatJSONL = "jsonl"
	formatWARC  = "warc"
)

// inputs is the crawler.RecordSource of `crawl dedup`: the --input paths in
// order, each read as a stream (one record in memory at a time, each body
// cut at maxBody). Not safe for concurrent use (Dedup reads from one
// goroutine).
type inputs struct {
	paths   []string
	format  string
	maxBody int64
	log     *slog.Logger
	// malformed counts input lines and records skipped as unreadable
	// (each also logged as a warning), for the summary.
	malformed int

	cur    crawler.RecordSource // the open input
	closer io.Closer            // of cur; nil for a directory
}

func (in *inputs) Next(ctx context.Context) (*crawler.Record, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if in.cur == nil {
			if len(in.paths) == 0 {
				return nil, io.EOF
			}
			if err := in.open(in.paths[0]); err != nil {
				return nil, err
			}
			in.paths = in.paths[1:]
		}
		rec, err := in.cur.Next(ctx)
		if errors.Is(err, io.EOF) {
			err = in.Close()
			in.cur = nil
			if err != nil {
				return nil, err
			}
			continue
		}
		return rec, err
	}
}

// Close closes the open input file, if any.
func (in *inputs) Close() error {
	if in.closer == nil {
		return nil
	}
	err := in.closer.Close()
	in.closer = nil
	return err
}

func (in *inputs) open(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("input: %w", err)
	}
	if st.IsDir() {
		if in.format != formatAuto && in.format != formatHTML {
			return fmt.Errorf("input %s is a directory: only --format html or auto reads directories", path)
		}
		in.cur = &htmlTree{stack: [][]string{{path}}, maxBody: in.maxBody}
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("input: %w", err)
	}
	in.closer = f
	format, err := sniffFormat(path, f, in.format)
	if err != nil {
		return err
	}
	switch format {
	case formatWARC:
		r, err := warc.NewReader(f)
		if err != nil {
			return fmt.Errorf("input %s: %w", path, err)
		}
		in.cur = &warcInput{r: r, path: path, maxBody: in.maxBody, log: in.log, malformed: &in.malformed}
	case formatJSONL:
		r, err := maybeGunzip(f)
		if err != nil {
			return fmt.Errorf("input %s: %w", path, err)
		}
		in.cur = &jsonlInput{r: bufio.NewReaderSize(r, 64<<10), path: path, maxLine: 2*in.maxBody + 64<<10, log: in.log, malformed: &in.malformed}
	default:
		in.cur = &htmlTree{stack: [][]string{{path}}, maxBody: in.maxBody}
	}
	return nil
}

// sniffFormat decides an input file's format: the one asked for, else by
// its name, else by its first bytes (after gunzip).
func sniffFormat(path string, f *os.File, asked string) (string, error) {
	if asked != formatAuto {
		return asked, nil
	}
	name := strings.ToLower(filepath.Base(path))
	name = strings.TrimSuffix(name, ".gz")
	switch filepath.Ext(name) {
	case ".warc", ".arc":
		return formatWARC, nil
	case ".jsonl", ".ndjson", ".json":
		return formatJSONL, nil
	case ".html", ".htm", ".xhtml", ".shtml":
		return formatHTML, nil
	}
	r, err := maybeGunzip(f)
	if err != nil {
		return "", fmt.Errorf("input %s: %w", path, err)
	}
	head := make([]byte, 512)
	n, err := io.ReadFull(r, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("input %s: %w", path, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", fmt.Errorf("input %s: %w", path, err)
	}
	head = bytes.TrimLeft(head[:n], " \t\r\n\ufeff")
	switch {
	case bytes.HasPrefix(head, []byte("WARC/")):
		return formatWARC, nil
	case bytes.HasPrefix(head, []byte("{")):
		return formatJSONL, nil
	}
	return formatHTML, nil
}

// maybeGunzip returns r decompressed when it starts with the gzip magic.
func maybeGunzip(f *os.File) (io.Reader, error) {
	br := bufio.NewReaderSize(f, 64<<10)
	magic, err := br.Peek(2)
	if err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		return gzip.NewReader(br)
	}
	return br, nil
}

// readBody reads at most max bytes of r and reports whether there was more.
func readBody(r io.Reader, max int64) ([]byte, bool, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(b)) > max {
		return b[:max], true, nil
	}
	return b, false, nil
}

// htmlTree walks a directory tree in lexical order (like filepath.WalkDir)
// without listing it whole: a stack of the directories' remaining names.
// Every .html/.htm/.xhtml/.shtml file is a record named by its file: URL.
type htmlTree struct {
	stack   [][]string
	maxBody int64
}

func (t *htmlTree) Next(ctx context.Context) (*crawler.Record, error) {
	for len(t.stack) > 0 {
		top := &t.stack[len(t.stack)-1]
		if len(*top) == 0 {
			t.stack = t.stack[:len(t.stack)-1]
			continue
		}
		path := (*top)[0]
		*top = (*top)[1:]
		st, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("input: %w", err)
		}
		if st.IsDir() {
			ents, err := os.ReadDir(path)
			if err != nil {
				return nil, fmt.Errorf("input: %w", err)
			}
			names := make([]string, 0, len(ents))
			for _, e := range ents {
				names = append(names, filepath.Join(path, e.Name()))
			}
			t.stack = append(t.stack, names)
			continue
		}
		if len(t.stack) > 1 && !isHTMLName(path) {
			continue // inside a tree only HTML files; a file named on the command line is read whatever its name
		}
		return t.read(path, st.ModTime())
	}
	return nil, io.EOF
}

func isHTMLName(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".html", ".htm", ".xhtml", ".shtml":
		return true
	}
	return false
}

func (t *htmlTree) read(path string, mod time.Time) (*crawler.Record, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	defer f.Close()
	body, cut, err := readBody(f, t.maxBody)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	ct := "text/html"
	if strings.EqualFold(filepath.Ext(path), ".xhtml") {
		ct = "application/xhtml+xml"
	}
	u := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	return &crawler.Record{URL: u, Body: body, ContentType: ct, FetchedAt: mod.UTC(), Truncated: cut}, nil
}

// jsonLine is one line of a JSON Lines input: url with html or text. The
// output of `crawl export` (url, text, title, lang, fetched_at) is such a
// file.
type jsonLine struct {
	URL       string  `json:"url"`
	HTML      *string `json:"html"` // nil when absent: "text": "" is a page without text
	Text      *string `json:"text"`
	Title     string  `json:"title"`
	Lang      string  `json:"lang"` // kept with a text record; html gives its own
	FetchedAt string  `json:"fetched_at"`
}

type jsonlInput struct {
	r       *bufio.Reader
	path    string
	line    int
	maxLine int64
	log     *slog.Logger
	// malformed counts the lines skipped (inputs.malformed).
	malformed *int
}

func (j *jsonlInput) Next(ctx context.Context) (*crawler.Record, error) {
	for {
		b, err := j.readLine()
		if err != nil {
			return nil, err
		}
		j.line++
		if b == nil {
			*j.malformed++
			j.log.Warn("skipped line: longer than the limit", "input", j.path, "line", j.line, "limit", j.maxLine)
			continue
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		var l jsonLine
		if err := json.Unmarshal(b, &l); err != nil {
			*j.malformed++
			j.log.Warn("skipped line: not a JSON object", "input", j.path, "line", j.line, "error", err)
			continue
		}
		if l.HTML == nil && l.Text == nil {
			*j.malformed++
			j.log.Warn("skipped line: neither html nor text", "input", j.path, "line", j.line)
			continue
		}
		// A page exported without text (thin, empty) comes back as one.
		rec := &crawler.Record{URL: l.URL, Title: l.Title, Lang: l.Lang}
		if l.Text != nil {
			rec.Text = *l.Text
		}
		if l.HTML != nil && *l.HTML != "" {
			rec.Body = []byte(*l.HTML)
		}
		if rec.URL == "" {
			abs, err := filepath.Abs(j.path)
			if err != nil {
				return nil, fmt.Errorf("input: %w", err)
			}
			rec.URL = (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs), Fragment: "L" + strconv.Itoa(j.line)}).String()
		}
		if t, err := time.Parse(time.RFC3339Nano, l.FetchedAt); err == nil {
			rec.FetchedAt = t
		}
		return rec, nil
	}
}

// readLine returns the next line, nil (and no error) for a line longer
// than maxLine, which is skipped, or io.EOF.
func (j *jsonlInput) readLine() ([]byte, error) {
	var line []byte
	long := false
	for {
		b, err := j.r.ReadSlice('\n')
		if !long {
			if int64(len(line)+len(b)) > j.maxLine {
				long, line = true, nil
			} else {
				line = append(line, b...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && (len(line) > 0 || long):
			err = nil
		case err != nil:
			if errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("read %s: %w", j.path, err)
		}
		if long {
			return nil, nil
		}
		return line, nil
	}
}

// warcInput yields the HTML response records of a WARC file: 2xx, with an
// HTML content type (or none), Content-Encoding gzip or deflate decoded.
// Other records (requests, metadata, images, revisits) are passed over,
// but for the metadata record `crawl export --format warc` writes after
// each page: its simcrawl-url, the URL the crawl requested (the target
// URI is the final one, after redirects), names the page, so that a
// crawl's own export read back into its data directory finds its pages.
type warcInput struct {
	r         *warc.Reader
	path      string
	maxBody   int64
	log       *slog.Logger
	malformed *int         // records skipped (inputs.malformed)
	next      *warc.Record // read ahead, looking for a page's metadata
	nextErr   error        // or the error reading ahead met, for the next call
}

func (w *warcInput) Next(ctx context.Context) (*crawler.Record, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rec, err := w.read()
		if err != nil {
			return nil, err
		}
		target := strings.Trim(rec.Header.Get("WARC-Target-URI"), "<>")
		var out *crawler.Record
		switch rec.Type() {
		case warc.TypeResponse:
			out = w.response(rec, target)
		case warc.TypeResource:
			out = w.resource(rec, target)
		}
		if out == nil {
			continue
		}
		if out.URL == "" {
			out.URL = (&url.URL{Scheme: "file", Path: w.path, Fragment: strconv.FormatInt(rec.Offset, 10)}).String()
		}
		if t, err := warc.ParseDate(rec.Header.Get("WARC-Date")); err == nil {
			out.FetchedAt = t
		}
		if err := w.requestedURL(rec, target, out); err != nil {
			return nil, err
		}
		return out, nil
	}
}

// read returns the record (or error) read ahead, else the next one.
func (w *warcInput) read() (*warc.Record, error) {
	if rec, err := w.next, w.nextErr; rec != nil || err != nil {
		w.next, w.nextErr = nil, nil
		return rec, err
	}
	rec, err := w.r.Next()
	if errors.Is(err, io.EOF) {
		return nil, io.EOF
	}
	if err != nil {
		return nil, fmt.Errorf("input %s: %w", w.path, err)
	}
	return rec, nil
}

// requestedURL reads the record after rec (whose block is read): when it
// is simcrawl's metadata for rec, out takes the URL it names, and target
// (rec's target URI, when it has one) becomes its final URL; otherwise the
// record is kept for the next call.
func (w *warcInput) requestedURL(rec *warc.Record, target string, out *crawler.Record) error {
	next, err := w.read()
	if err != nil {
		w.nextErr = err // out is read whole: the error waits for the next call
		return nil
	}
	id := rec.Header.Get("WARC-Record-ID")
	if next.Type() != warc.TypeMetadata || id == "" || next.Header.Get("WARC-Concurrent-To") != id {
		w.next = next
		return nil
	}
	block, err := io.ReadAll(io.LimitReader(next.Block, 64<<10))
	if err != nil {
		return fmt.Errorf("input %s: metadata at offset %d: %w", w.path, next.Offset, err)
	}
	if u := warc.ParseFields(block).Get(warcFieldURL); u != "" && u != out.URL {
		out.URL = u
		if target != "" {
			out.FinalURL = target
		}
	}
	return nil
}

// response returns the page in a response record, or nil when it is not
// a 2xx response of a page type (isPageType).
func (w *warcInput) response(rec *warc.Record, target string) *crawler.Record {
	ct := rec.Header.Get("Content-Type")
	if ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/http") {
		return nil
	}
	resp, err := warc.ReadResponse(rec.Block)
	if err != nil {
		*w.malformed++
		w.log.Warn("skipped WARC record: bad HTTP response", "input", w.path, "offset", rec.Offset, "url", target, "error", err)
		return nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 || !isPageType(resp.Header.Get("Content-Type")) {
		return nil
	}
	body, cut, err := w.payload(resp.Header.Get("Content-Encoding"), resp.Body)
	if err != nil {
		*w.malformed++
		w.log.Warn("skipped WARC record: body", "input", w.path, "offset", rec.Offset, "url", target, "error", err)
		return nil
	}
	resp.Header.Del("Content-Encoding")
	return &crawler.Record{
		URL: target, Body: body, ContentType: resp.Header.Get("Content-Type"),
		Header: resp.Header, Status: resp.StatusCode, Truncated: cut,
	}
}

// resource returns the page in a resource record: HTML, or plain text
// taken as extracted text (what `crawl export --format warc` writes for a
// page stored without a body).
func (w *warcInput) resource(rec *warc.Record, target string) *crawler.Record {
	ct := rec.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	if !isPageType(ct) {
		return nil
	}
	body, cut, err := readBody(rec.Block, w.maxBody)
	if err != nil {
		*w.malformed++
		w.log.Warn("skipped WARC record", "input", w.path, "offset", rec.Offset, "url", target, "error", err)
		return nil
	}
	if mt == "text/plain" {
		return &crawler.Record{URL: target, Text: string(body), Truncated: cut}
	}
	return &crawler.Record{URL: target, Body: body, ContentType: ct, Truncated: cut}
}

func (w *warcInput) payload(encoding string, body io.Reader) ([]byte, bool, error) {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "", "identity":
	case "gzip", "x-gzip":
		z, err := gzip.NewReader(body)
		if err != nil {
			return nil, false, err
		}
		body = z
	case "deflate":
		body = flate.NewReader(body)
	default:
		return nil, false, fmt.Errorf("content encoding %q not supported", encoding)
	}
	return readBody(body, w.maxBody)
}

// isPageType reports whether a response with this Content-Type may be a
// page: what the crawl hands to extraction, which decides (text/html,
// application/xhtml+xml, text/plain, which misconfigured servers give
// HTML and the crawl stores as a thin or text page, and none, sniffed).
// A crawl exported as WARC then reads back with every page it stored.
func isPageType(ct string) bool {
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return strings.Contains(strings.ToLower(ct), "html")
	}
	return mt == "text/html" || mt == "application/xhtml+xml" || mt == "text/plain"
}

// keptWriter writes kept records as JSON Lines, in the fields of
// `crawl export` (storage.ExportRecord).
type keptWriter struct {
	bw  *bufio.Writer
	enc *json.Encoder
	n   int
}

func newKeptWriter(w io.Writer) *keptWriter {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &keptWriter{bw: bw, enc: enc}
}

func (k *keptWriter) write(p *storage.Page) error {
	k.n++
	return k.enc.Encode(storage.ExportRecord{
		ID: p.ID, URL: p.URL, FinalURL: p.FinalURL, Status: p.Status,
		ContentType: p.ContentType, Lang: p.Lang, Title: p.Title, Text: p.Text,
		Fingerprint: fmt.Sprintf("%016x", p.Fingerprint), Thin: p.Thin, Truncated: p.Truncated,
		FetchedAt: p.FetchedAt.UTC().Format(storage.TimeFormat), Depth: p.Depth,
	})
}
