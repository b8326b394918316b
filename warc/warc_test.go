package warc

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

type testRecord struct {
	typ, uri string
	block    []byte
}

func writeAll(t *testing.T, compress bool, recs []testRecord) ([]byte, []int64) {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf, compress)
	var offs []int64
	for i, r := range recs {
		h := Header{
			{"WARC-Type", r.typ},
			{"WARC-Record-ID", NewRecordID()},
			{"WARC-Date", FormatDate(time.Date(2026, 1, 2, 3, 4, 5, i, time.UTC))},
		}
		if r.uri != "" {
			h.Set("WARC-Target-URI", r.uri)
		}
		off, err := w.WriteRecord(h, r.block)
		if err != nil {
			t.Fatalf("WriteRecord %d: %v", i, err)
		}
		offs = append(offs, off)
	}
	return buf.Bytes(), offs
}

func TestRoundTrip(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 10000) // > the reader's buffer
	recs := []testRecord{
		{TypeWarcinfo, "", FormatFields(Field{"software", "simcrawl test"})},
		{TypeResponse, "http://example.com/", ResponseBlock(200, http.Header{"Content-Type": {"text/html"}}, []byte("<p>hi</p>"))},
		{TypeMetadata, "http://example.com/", FormatFields(Field{"fp", "0123456789abcdef"}, Field{"note", "two\nlines"})},
		{TypeResource, "http://example.com/big", big},
		{TypeResource, "http://example.com/empty", nil},
	}
	for _, compress := range []bool{false, true} {
		t.Run(fmt.Sprintf("gzip=%v", compress), func(t *testing.T) {
			data, offs := writeAll(t, compress, recs)
			r, err := NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range recs {
				rec, err := r.Next()
				if err != nil {
					t.Fatalf("Next %d: %v", i, err)
				}
				if rec.Version != Version || rec.Type() != want.typ || rec.Header.Get("warc-target-uri") != want.uri {
					t.Errorf("record %d: %s type %q uri %q, want %s %q %q", i, rec.Version, rec.Type(), rec.Header.Get("WARC-Target-URI"), Version, want.typ, want.uri)
				}
				if rec.Offset != offs[i] {
					t.Errorf("record %d: offset %d, want %d", i, rec.Offset, offs[i])
				}
				// Skip reading one block: Next must skip it.
				if i == 3 {
					continue
				}
				got, err := io.ReadAll(rec.Block)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want.block) {
					t.Errorf("record %d: block %q, want %q", i, got, want.block)
				}
				if d := rec.Header.Get("WARC-Block-Digest"); d != Digest(got) {
					t.Errorf("record %d: block digest %s, want %s", i, d, Digest(got))
				}
			}
			if _, err := r.Next(); !errors.Is(err, io.EOF) {
				t.Fatalf("Next after last = %v, want io.EOF", err)
			}
			// A record read from its offset alone (what a CDX index does).
			if compress {
				r, err := NewReader(bytes.NewReader(data[offs[2]:]))
				if err != nil {
					t.Fatal(err)
				}
				rec, err := r.Next()
				if err != nil || rec.Type() != TypeMetadata {
					t.Fatalf("record at offset %d: %v %v", offs[2], rec, err)
				}
				b, _ := io.ReadAll(rec.Block)
				if got := ParseFields(b).Get("note"); got != "two lines" {
					t.Errorf("metadata note = %q, want %q", got, "two lines")
				}
			}
		})
	}
}

func TestResponseBlock(t *testing.T) {
	h := http.Header{"Content-Type": {"text/html; charset=utf-8"}, "Content-Encoding": {"gzip"}, "X-A": {"1"}}
	block := ResponseBlock(404, h, []byte("gone"))
	resp, err := ReadResponse(bytes.NewReader(block))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 404 || string(body) != "gone" || resp.Header.Get("X-A") != "1" || resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("got %d %q %v", resp.StatusCode, body, resp.Header)
	}
	if h.Get("Content-Encoding") != "gzip" {
		t.Error("ResponseBlock modified its header argument")
	}
}

// Files written by other tools: LF line ends, no trailer, one gzip member
// for the whole file, blank lines between records.
func TestReadTolerant(t *testing.T) {
	plain := "WARC/1.0\nWARC-Type: resource\nContent-Length: 3\n\nabc" +
		"\r\n\r\n\r\nWARC/1.0\r\nWARC-Type: response\r\nX-Long: a\r\n  b\r\nContent-Length: 0\r\n\r\n"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write([]byte(plain)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"plain": []byte(plain), "whole-file gzip": gz.Bytes()} {
		t.Run(name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			rec, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(rec.Block)
			if rec.Type() != TypeResource || string(b) != "abc" {
				t.Errorf("first record: %q %q", rec.Type(), b)
			}
			rec, err = r.Next()
			if err != nil {
				t.Fatal(err)
			}
			if rec.Type() != TypeResponse || rec.Header.Get("X-Long") != "a b" {
				t.Errorf("second record: %q %q", rec.Type(), rec.Header.Get("X-Long"))
			}
			if _, err := r.Next(); !errors.Is(err, io.EOF) {
				t.Errorf("end: %v, want io.EOF", err)
			}
		})
	}
}

func TestReadMalformed(t *testing.T) {
	for name, in := range map[string]string{
		"not warc":           "HTTP/1.1 200 OK\r\n\r\n",
		"no content-length":  "WARC/1.1\r\nWARC-Type: resource\r\n\r\n",
		"bad content-length": "WARC/1.1\r\nContent-Length: -1\r\n\r\n",
		"header cut":         "WARC/1.1\r\nWARC-Type: resource\r\n",
		"bad field":          "WARC/1.1\r\nno colon here\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			r, err := NewReader(strings.NewReader(in))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Next(); !errors.Is(err, ErrFormat) {
				t.Errorf("Next = %v, want ErrFormat", err)
			}
		})
	}
	t.Run("block cut", func(t *testing.T) {
		r, err := NewReader(strings.NewReader("WARC/1.1\r\nContent-Length: 10\r\n\r\nabc"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Next(); !errors.Is(err, ErrFormat) {
			t.Errorf("Next after a cut block = %v, want ErrFormat", err)
		}
	})
	t.Run("empty", func(t *testing.T) {
		r, err := NewReader(strings.NewReader(""))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Next(); !errors.Is(err, io.EOF) {
			t.Errorf("Next = %v, want io.EOF", err)
		}
	})
}

func TestWriteRecordNeedsFields(t *testing.T) {
	w := NewWriter(io.Discard, true)
	if _, err := w.WriteRecord(Header{{"WARC-Type", TypeResource}}, nil); err == nil {
		t.Error("WriteRecord without WARC-Record-ID and WARC-Date: no error")
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte("WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 3\r\n\r\nabc\r\n\r\n"))
	f.Add([]byte{0x1f, 0x8b, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		for range 100 {
			rec, err := r.Next()
			if err != nil {
				return
			}
			if _, err := io.Copy(io.Discard, rec.Block); err != nil {
				return
			}
		}
	})
}
