package warc

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Writer writes records to an io.Writer, each as its own gzip member when
// compressing. It does not buffer: wrap a file in a bufio.Writer and flush
// it. A Writer is not safe for concurrent use.
type Writer struct {
	w   *countWriter
	gz  *gzip.Writer // nil when not compressing
	buf bytes.Buffer // the record's header, built per record
}

// NewWriter returns a Writer on w; with compress, records are gzip members
// (a .warc.gz).
func NewWriter(w io.Writer, compress bool) *Writer {
	ww := &Writer{w: &countWriter{w: w}}
	if compress {
		ww.gz = gzip.NewWriter(ww.w)
	}
	return ww
}

// WriteRecord writes one record with header fields h and block, and returns
// the record's offset (of its gzip member when compressing). WARC-Type,
// WARC-Record-ID and WARC-Date must be set; Content-Length is set from
// block, and WARC-Block-Digest when h has none. Fields are written in h's
// order after the version line.
func (w *Writer) WriteRecord(h Header, block []byte) (offset int64, err error) {
	for _, name := range []string{"WARC-Type", "WARC-Record-ID", "WARC-Date"} {
		if h.Get(name) == "" {
			return 0, fmt.Errorf("warc: write record: no %s", name)
		}
	}
	h = append(Header(nil), h...)
	h.Set("Content-Length", strconv.Itoa(len(block)))
	if h.Get("WARC-Block-Digest") == "" {
		h.Set("WARC-Block-Digest", Digest(block))
	}
	w.buf.Reset()
	w.buf.WriteString(Version + "\r\n")
	for _, f := range h {
		if f.Name == "" || strings.ContainsAny(f.Name, ":\r\n ") {
			return 0, fmt.Errorf("warc: write record: bad field name %q", f.Name)
		}
		w.buf.WriteString(f.Name + ": " + oneLine(f.Value) + "\r\n")
	}
	w.buf.WriteString("\r\n")
	offset = w.w.n
	var out io.Writer = w.w
	if w.gz != nil {
		// One member per record: a gzip.Writer must be reset before it is
		// used again after Close.
		w.gz.Reset(w.w)
		out = w.gz
	}
	for _, b := range [][]byte{w.buf.Bytes(), block, []byte("\r\n\r\n")} {
		if _, err := out.Write(b); err != nil {
			return offset, fmt.Errorf("warc: write record: %w", err)
		}
	}
	if w.gz != nil {
		if err := w.gz.Close(); err != nil {
			return offset, fmt.Errorf("warc: write record: %w", err)
		}
	}
	return offset, nil
}

// ResponseBlock returns the block of a response record: an HTTP/1.1 status
// line, header and body. The header describes body as given: hop-by-hop
// Transfer-Encoding and Content-Encoding (body is taken as already decoded)
// are left out and Content-Length is body's length.
func ResponseBlock(status int, header http.Header, body []byte) []byte {
	var b bytes.Buffer
	text := http.StatusText(status)
	if text == "" {
		text = "status code " + strconv.Itoa(status)
	}
	fmt.Fprintf(&b, "HTTP/1.1 %03d %s\r\n", status, text)
	h := header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Del("Transfer-Encoding")
	h.Del("Content-Encoding")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if err := h.Write(&b); err != nil {
		panic(err) // a bytes.Buffer does not fail
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
