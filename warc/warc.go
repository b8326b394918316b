package warc

import (
	"crypto/rand"
	"crypto/sha1"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Version is the version line this package writes.
const Version = "WARC/1.1"

// Record types (WARC-Type values) this package's users write and read.
const (
	TypeWarcinfo = "warcinfo"
	TypeResponse = "response"
	TypeRequest  = "request"
	TypeMetadata = "metadata"
	TypeResource = "resource"
	TypeRevisit  = "revisit"
)

// MaxHeaderBytes bounds a record's version line and header fields: a file
// that claims a longer header is corrupt, not merely large.
const MaxHeaderBytes = 1 << 20

// ErrFormat is wrapped by every error about malformed input.
var ErrFormat = errors.New("warc: malformed record")

// Field is one named header field.
type Field struct{ Name, Value string }

// Header is a record's named fields in file order. Names compare without
// regard to case. A Header is a plain value: not safe for concurrent
// modification.
type Header []Field

// Get returns the value of the first field named name, or "".
func (h Header) Get(name string) string {
	for _, f := range h {
		if strings.EqualFold(f.Name, name) {
			return f.Value
		}
	}
	return ""
}

// Set replaces the value of the first field named name, or appends it.
func (h *Header) Set(name, value string) {
	for i, f := range *h {
		if strings.EqualFold(f.Name, name) {
			(*h)[i].Value = value
			return
		}
	}
	*h = append(*h, Field{name, value})
}

// Record is one record as read by Reader. Block is valid until the next
// call of Reader.Next. Not safe for concurrent use.
type Record struct {
	Version       string // "WARC/1.1", "WARC/1.0", ...
	Header        Header
	ContentLength int64
	// Offset is where the record starts in the file: its gzip member's
	// offset in a .warc.gz (see the package doc), its own offset otherwise.
	Offset int64
	Block  io.Reader // exactly ContentLength bytes
}

// Type returns the record's WARC-Type.
func (r *Record) Type() string { return r.Header.Get("WARC-Type") }

// NewRecordID returns a fresh record ID, "<urn:uuid:...>" with a random
// (version 4) UUID.
func NewRecordID() string {
	var u [16]byte
	if _, err := rand.Read(u[:]); err != nil {
		panic(fmt.Sprintf("warc: crypto/rand: %v", err)) // never fails on supported systems
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("<urn:uuid:%x-%x-%x-%x-%x>", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// Digest returns b's digest in the usual WARC form, "sha1:" and the base32
// SHA-1, as WARC-Block-Digest and WARC-Payload-Digest carry it.
func Digest(b []byte) string {
	s := sha1.Sum(b)
	return "sha1:" + base32.StdEncoding.EncodeToString(s[:])
}

// FormatDate formats t for WARC-Date: UTC, RFC 3339, with the fraction of
// a second WARC/1.1 allows when t has one.
func FormatDate(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.999999999Z")
}

// ParseDate parses a WARC-Date (with or without a fraction of a second).
func ParseDate(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: WARC-Date %q", ErrFormat, s)
	}
	return t, nil
}

// FormatFields writes named fields in application/warc-fields form
// ("name: value" lines ending in CRLF), for warcinfo and metadata blocks.
// Line breaks inside values are replaced by spaces.
func FormatFields(fields ...Field) []byte {
	var b strings.Builder
	for _, f := range fields {
		b.WriteString(f.Name)
		b.WriteString(": ")
		b.WriteString(oneLine(f.Value))
		b.WriteString("\r\n")
	}
	return []byte(b.String())
}

// ParseFields parses an application/warc-fields block.
func ParseFields(block []byte) Header {
	var h Header
	for _, line := range strings.Split(string(block), "\n") {
		line = strings.TrimRight(line, "\r")
		name, value, ok := strings.Cut(line, ":")
		if !ok || name == "" {
			continue
		}
		h = append(h, Field{strings.TrimSpace(name), strings.TrimSpace(value)})
	}
	return h
}

func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ").Replace(s)
}

// discard reads r to its end.
func discard(r io.Reader) error {
	_, err := io.Copy(io.Discard, r)
	return err
}
