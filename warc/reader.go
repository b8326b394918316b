package warc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Reader reads records one at a time from a plain or gzip-compressed WARC
// stream (detected from the first bytes). It holds one header and a 64 KiB
// buffer, whatever the size of records. Not safe for concurrent use.
type Reader struct {
	file    *countReader      // the stream as given, counting bytes consumed
	gz      *gzip.Reader      // nil for a plain stream
	br      *bufio.Reader     // decompressed bytes of the current member (or the file)
	body    *io.LimitedReader // the previous record's unread block
	bodyLen int64

	memberStart int64 // gzip: offset of the current member
	pos         int64 // plain: offset of the next unread byte
	done        bool
}

// NewReader returns a Reader on r. It reads the first bytes to tell a
// .warc.gz from a plain WARC; an empty r gives a Reader whose Next returns
// io.EOF.
func NewReader(r io.Reader) (*Reader, error) {
	fr := &countReader{br: bufio.NewReaderSize(r, 64<<10)}
	wr := &Reader{file: fr}
	magic, err := fr.br.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("warc: read: %w", err)
	}
	if !bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		wr.br = fr.br
		return wr, nil
	}
	wr.gz, err = gzip.NewReader(fr)
	if err != nil {
		return nil, fmt.Errorf("warc: gzip: %w", err)
	}
	wr.gz.Multistream(false)
	wr.br = bufio.NewReaderSize(wr.gz, 64<<10)
	return wr, nil
}

// Next skips what is left of the previous record and returns the next one,
// or io.EOF after the last. Errors about the format wrap ErrFormat.
func (r *Reader) Next() (*Record, error) {
	if r.done {
		return nil, io.EOF
	}
	if err := r.finishRecord(); err != nil {
		return nil, err
	}
	if err := r.skipBlankLines(); err != nil {
		if errors.Is(err, io.EOF) {
			r.done = true
		}
		return nil, err
	}
	rec := &Record{Offset: r.pos}
	if r.gz != nil {
		rec.Offset = r.memberStart
	}
	version, err := r.line()
	if err != nil {
		return nil, r.truncated(err)
	}
	if !strings.HasPrefix(version, "WARC/") {
		return nil, fmt.Errorf("%w at offset %d: version line %q", ErrFormat, rec.Offset, clip(version))
	}
	rec.Version = version
	size := len(version)
	for {
		line, err := r.line()
		if err != nil {
			return nil, r.truncated(err)
		}
		if line == "" {
			break
		}
		if size += len(line); size > MaxHeaderBytes {
			return nil, fmt.Errorf("%w at offset %d: header longer than %d bytes", ErrFormat, rec.Offset, MaxHeaderBytes)
		}
		if (line[0] == ' ' || line[0] == '\t') && len(rec.Header) > 0 {
			rec.Header[len(rec.Header)-1].Value += " " + strings.TrimSpace(line)
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("%w at offset %d: header line %q", ErrFormat, rec.Offset, clip(line))
		}
		rec.Header = append(rec.Header, Field{strings.TrimSpace(name), strings.TrimSpace(value)})
	}
	n, err := strconv.ParseInt(rec.Header.Get("Content-Length"), 10, 64)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("%w at offset %d: Content-Length %q", ErrFormat, rec.Offset, rec.Header.Get("Content-Length"))
	}
	rec.ContentLength = n
	r.body, r.bodyLen = &io.LimitedReader{R: r.br, N: n}, n
	rec.Block = r.body
	return rec, nil
}

// finishRecord discards the rest of the previous block and its trailer.
func (r *Reader) finishRecord() error {
	if r.body == nil {
		return nil
	}
	if err := discard(r.body); err != nil {
		return fmt.Errorf("warc: read block: %w", err)
	}
	if r.body.N > 0 {
		return fmt.Errorf("%w: block cut short by %d bytes (truncated file?)", ErrFormat, r.body.N)
	}
	r.pos += r.bodyLen
	r.body = nil
	return nil
}

// skipBlankLines consumes line ends (record trailers, stray blank lines)
// and, in a .warc.gz, moves on to the next gzip member at a member's end.
// It returns io.EOF at the end of the stream.
func (r *Reader) skipBlankLines() error {
	for {
		b, err := r.br.ReadByte()
		switch {
		case err == nil && (b == '\r' || b == '\n'):
			r.pos++
			continue
		case err == nil:
			return r.br.UnreadByte()
		case !errors.Is(err, io.EOF):
			return fmt.Errorf("warc: read: %w", err)
		case r.gz == nil:
			return io.EOF
		}
		// End of a gzip member: the next one starts here, if any.
		r.memberStart = r.file.n
		if err := r.gz.Reset(r.file); err != nil {
			if errors.Is(err, io.EOF) {
				return io.EOF
			}
			return fmt.Errorf("warc: gzip member at offset %d: %w", r.memberStart, err)
		}
		r.gz.Multistream(false)
		r.br.Reset(r.gz)
	}
}

// line reads one line without its line end, bounded by MaxHeaderBytes.
func (r *Reader) line() (string, error) {
	var long []byte
	for {
		b, err := r.br.ReadSlice('\n')
		r.pos += int64(len(b))
		if errors.Is(err, bufio.ErrBufferFull) {
			if long = append(long, b...); len(long) > MaxHeaderBytes {
				return "", fmt.Errorf("%w: header line longer than %d bytes", ErrFormat, MaxHeaderBytes)
			}
			continue
		}
		if err != nil {
			return "", err
		}
		if long != nil {
			b = append(long, b...)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
}

func (r *Reader) truncated(err error) error {
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: header cut short (truncated file?)", ErrFormat)
	}
	if errors.Is(err, ErrFormat) {
		return err
	}
	return fmt.Errorf("warc: read: %w", err)
}

// ReadResponse parses a response record's block as an HTTP response. The
// body is the response's (chunked transfer encoding decoded; Content-Encoding
// left as it is); it reads from block, so it is valid while block is.
func ReadResponse(block io.Reader) (*http.Response, error) {
	resp, err := http.ReadResponse(bufio.NewReader(block), nil)
	if err != nil {
		return nil, fmt.Errorf("%w: http response: %v", ErrFormat, err)
	}
	return resp, nil
}

type countReader struct {
	br *bufio.Reader
	n  int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.br.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countReader) ReadByte() (byte, error) {
	b, err := c.br.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
