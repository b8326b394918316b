package storage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func sampleRecord() DropRecord {
	return DropRecord{
		Time:               time.Date(2026, 11, 22, 13, 57, 1, 123000000, time.UTC),
		URL:                "http://example.com/mirror",
		FinalURL:           "https://example.com/mirror",
		DuplicateOf:        "https://example.com/article",
		DuplicateOfID:      42,
		Distance:           2,
		Reason:             ReasonNear,
		Fingerprint:        0x00ff00ff00ff00ff,
		MatchedFingerprint: 0x00ff00ff00ff00fc,
		Title:              "Fish & <chips>",
		Depth:              3,
	}
}

// The drop log is a user-facing contract: this literal line is it.
const sampleLine = `{"time":"2026-11-22T13:57:01.123Z","url":"http://example.com/mirror",` +
	`"final_url":"https://example.com/mirror","duplicate_of":"https://example.com/article",` +
	`"duplicate_of_id":42,"distance":2,"reason":"near","fingerprint":"00ff00ff00ff00ff",` +
	`"matched_fingerprint":"00ff00ff00ff00fc","title":"Fish & <chips>","depth":3}` + "\n"

func readAll(t *testing.T, path string) ([]DropRecord, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []DropRecord
	err = ReadDropLog(f, func(r DropRecord) error { recs = append(recs, r); return nil })
	return recs, err
}

func TestDropLogFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "dir", "dropped.jsonl")
	l, err := OpenDropLog(path)
	if err != nil {
		t.Fatal(err)
	}
	rec := sampleRecord()
	if err := l.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Write(rec); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close = %v, want ErrClosed", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != sampleLine {
		t.Fatalf("drop log line:\n%s\nwant\n%s", b, sampleLine)
	}
	recs, err := readAll(t, path)
	if err != nil || len(recs) != 1 || !reflect.DeepEqual(recs[0], rec) {
		t.Errorf("ReadDropLog = %+v, %v; want [%+v]", recs, err, rec)
	}

	// json.Marshal re-escapes HTML in a Marshaler's output, so compare
	// values, not bytes.
	m, err := json.Marshal(rec)
	var back DropRecord
	if err != nil || json.Unmarshal(m, &back) != nil || !reflect.DeepEqual(back, rec) {
		t.Errorf("json.Marshal(DropRecord) = %s, %v; does not read back", m, err)
	}
	if err := json.Unmarshal([]byte(sampleLine), &back); err != nil || !reflect.DeepEqual(back, rec) {
		t.Errorf("json.Unmarshal(sample line) = %+v, %v", back, err)
	}
	bad := strings.Replace(sampleLine, `"00ff00ff00ff00ff"`, `"ff"`, 1)
	if err := json.Unmarshal([]byte(bad), &back); err == nil {
		t.Error("a 2-digit fingerprint parsed")
	}
}

func TestDropLogAppendsConcurrently(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dropped.jsonl")
	l, err := OpenDropLog(path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 10 {
				r := sampleRecord()
				r.URL = fmt.Sprintf("http://example.com/%d/%d", w, i)
				if err := l.Write(r); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopening appends after what is there.
	l, err = OpenDropLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Write(sampleRecord()); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	recs, err := readAll(t, path)
	if err != nil || len(recs) != 41 {
		t.Fatalf("ReadDropLog: %d records, %v; want 41", len(recs), err)
	}
	seen := map[string]bool{}
	for _, r := range recs {
		seen[r.URL] = true
	}
	if len(seen) != 41 { // 40 distinct, plus the sample URL
		t.Errorf("%d distinct URLs, want 41", len(seen))
	}
}

func TestDropLogTornLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dropped.jsonl")
	torn := sampleLine[:57] // a crash in the middle of a Write
	if err := os.WriteFile(path, []byte(sampleLine+sampleLine+torn), 0o644); err != nil {
		t.Fatal(err)
	}

	recs, err := readAll(t, path)
	if !errors.Is(err, ErrTornLine) || !strings.Contains(err.Error(), "line 3") || len(recs) != 2 {
		t.Fatalf("ReadDropLog(torn) = %d records, %v; want 2 and ErrTornLine naming line 3", len(recs), err)
	}

	l, err := OpenDropLog(path) // cuts the torn tail before appending
	if err != nil {
		t.Fatal(err)
	}
	if l.TornBytes() != int64(len(torn)) {
		t.Errorf("TornBytes = %d, want %d", l.TornBytes(), len(torn))
	}
	if err := l.Write(sampleRecord()); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if recs, err := readAll(t, path); err != nil || len(recs) != 3 {
		t.Errorf("after reopen: %d records, %v; want 3, nil", len(recs), err)
	}

	for _, tc := range []struct {
		name, in string
		n        int
		wantErr  string // "" for none
		torn     bool
	}{
		{"no final newline but whole", sampleLine + strings.TrimSuffix(sampleLine, "\n"), 2, "", false},
		{"blank lines", "\n" + sampleLine + "  \n", 1, "", false},
		{"bad middle line", sampleLine + "{oops}\n" + sampleLine, 1, "line 2", false},
		{"only a torn line", `{"time":"20`, 0, "line 1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			err := ReadDropLog(bytes.NewBufferString(tc.in), func(DropRecord) error { n++; return nil })
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("err = %v, want one naming %q", err, tc.wantErr)
			}
			if errors.Is(err, ErrTornLine) != tc.torn {
				t.Errorf("errors.Is(%v, ErrTornLine) = %v, want %v", err, !tc.torn, tc.torn)
			}
			if n != tc.n {
				t.Errorf("%d records, want %d", n, tc.n)
			}
		})
	}
}

// FuzzReadDropLog: hostile logs give records or errors, never a panic, and
// what parses writes back to a line that parses to the same record.
func FuzzReadDropLog(f *testing.F) {
	f.Add(sampleLine + sampleLine)
	f.Add(sampleLine[:40])
	f.Add("\n\n{}\n")
	f.Add(`{"time":"2026-11-22T13:57:01Z","fingerprint":"zzzzzzzzzzzzzzzz"}`)
	f.Fuzz(func(t *testing.T, in string) {
		err := ReadDropLog(strings.NewReader(in), func(r DropRecord) error {
			line, err := json.Marshal(r)
			if err != nil {
				return err
			}
			var back DropRecord
			if err := json.Unmarshal(line, &back); err != nil {
				return fmt.Errorf("re-reading %s: %w", line, err)
			}
			if !back.Time.Equal(r.Time.Truncate(time.Millisecond)) {
				return fmt.Errorf("time %v came back as %v", r.Time, back.Time)
			}
			return nil
		})
		if err != nil && strings.Contains(err.Error(), "re-reading") {
			t.Fatal(err)
		}
	})
}

// BenchmarkDropLogWrite is one fsynced line per Write, as the crawler
// writes them: its rate is the disk's fsync rate.
func BenchmarkDropLogWrite(b *testing.B) {
	l, err := OpenDropLog(filepath.Join(b.TempDir(), "dropped.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	r := sampleRecord()
	b.SetBytes(int64(len(sampleLine)))
	b.ReportAllocs()
	for b.Loop() {
		if err := l.Write(r); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
}
