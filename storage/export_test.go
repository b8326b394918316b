package storage

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

func TestExportJSONL(t *testing.T) {
	s, db := newStore(t, DefaultOptions())
	var want []ExportRecord
	for i := range 3 {
		p := samplePage(fmt.Sprintf("http://example.com/%d", i))
		p.Thin = i == 2
		put(t, s, db, p)
		want = append(want, ExportRecord{
			ID: p.ID, URL: p.URL, FinalURL: p.FinalURL, Status: 200,
			ContentType: p.ContentType, Lang: "en", Title: p.Title, Text: p.Text,
			Fingerprint: "0123456789abcdef", Thin: p.Thin, Truncated: true,
			FetchedAt: "2026-11-22T13:57:01.123Z", Depth: 2,
		})
	}
	var out bytes.Buffer
	n, err := s.ExportJSONL(context.Background(), &out)
	if err != nil || n != 3 {
		t.Fatalf("ExportJSONL = %d, %v; want 3, nil", n, err)
	}
	if bytes.Contains(out.Bytes(), []byte(`\u0026`)) {
		t.Error("export escapes & as \\u0026; texts should stay readable")
	}
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	var got []ExportRecord
	for sc.Scan() {
		var keys map[string]any
		if err := json.Unmarshal(sc.Bytes(), &keys); err != nil {
			t.Fatalf("line %d: %v", len(got)+1, err)
		}
		for _, k := range []string{"url", "final_url", "title", "text", "fingerprint", "fetched_at", "depth"} {
			if _, ok := keys[k]; !ok {
				t.Errorf("line %d lacks %q", len(got)+1, k)
			}
		}
		if _, ok := keys["data"]; ok {
			t.Errorf("line %d of an export of one store has \"data\"", len(got)+1)
		}
		var r ExportRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("exported\n%+v\nwant\n%+v", got, want)
	}
}

// An export of one of several stores names the store in every record.
func TestExportJSONLFrom(t *testing.T) {
	s, db := newStore(t, DefaultOptions())
	put(t, s, db, samplePage("http://example.com/a"))
	var out bytes.Buffer
	if _, err := s.ExportJSONLFrom(context.Background(), &out, "worker-b"); err != nil {
		t.Fatal(err)
	}
	var r ExportRecord
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if r.Data != "worker-b" || r.ID != 1 || !bytes.HasSuffix(bytes.TrimSpace(out.Bytes()), []byte(`,"data":"worker-b"}`)) {
		t.Errorf("ExportJSONLFrom(worker-b) wrote %s: want data last, worker-b", out.Bytes())
	}
}
