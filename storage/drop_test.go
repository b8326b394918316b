package storage

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func putDrop(t testing.TB, s *Store, db *bolt.DB, d *Drop) {
	t.Helper()
	if err := db.Update(func(tx *bolt.Tx) error { return s.PutDropTx(tx, d) }); err != nil {
		t.Fatalf("PutDropTx(%s): %v", d.URL, err)
	}
}

func sampleDrop(i int, target uint64) *Drop {
	d := &Drop{
		URL:                fmt.Sprintf("http://mirror.example/%d", i),
		FinalURL:           fmt.Sprintf("https://mirror.example/%d", i),
		Title:              fmt.Sprintf("Mirror %d", i),
		Depth:              i % 3,
		FetchedAt:          time.Date(2026, 11, 22, 14, 0, i, 0, time.UTC),
		DuplicateOf:        target,
		Distance:           i % 4,
		Reason:             []string{ReasonExact, ReasonNear}[min(i%4, 1)],
		Fingerprint:        uint64(i) << 32,
		MatchedFingerprint: uint64(i)<<32 | 0b101,
		Text:               fmt.Sprintf("the text of mirror %d, with an ad line", i),
	}
	if i%5 == 4 { // a copy of a page another worker of the crawl stored
		d.DuplicateOfURL = fmt.Sprintf("http://elsewhere.example/%d", target)
	}
	return d
}

func TestDropsRoundTripAndOrder(t *testing.T) {
	ctx := context.Background()
	s, db := newStore(t, DefaultOptions())
	const n = 600 // more than one scan chunk
	var want []*Drop
	for i := range n {
		d := sampleDrop(i, uint64(1+i%2))
		putDrop(t, s, db, d)
		if d.ID != uint64(i+1) {
			t.Fatalf("drop %d got ID %d", i, d.ID)
		}
		c := *d
		c.TextLen = len(c.Text)
		want = append(want, &c)
	}
	var got []*Drop
	if err := s.Drops(ctx, func(d *Drop) error { got = append(got, d); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Drops returned %d drops, not the %d put (first: %+v)", len(got), len(want), got[0])
	}

	i := 0
	if err := s.DropHeaders(ctx, func(d *Drop) error {
		w := *want[i]
		w.Text = ""
		if !reflect.DeepEqual(d, &w) {
			return fmt.Errorf("DropHeaders #%d = %+v, want %+v", i, d, &w)
		}
		i++
		return nil
	}); err != nil || i != n {
		t.Fatalf("DropHeaders: %v after %d", err, i)
	}

	for _, url := range []string{want[7].URL, want[7].FinalURL} {
		if d, err := s.DropByURL(ctx, url); err != nil || !reflect.DeepEqual(d, want[7]) {
			t.Errorf("DropByURL(%s) = %+v, %v; want %+v", url, d, err, want[7])
		}
	}
	if _, err := s.DropByURL(ctx, "http://none/"); !errors.Is(err, ErrNotFound) {
		t.Errorf("DropByURL(unknown) = %v, want ErrNotFound", err)
	}
	if d, err := s.GetDrop(ctx, 3); err != nil || !reflect.DeepEqual(d, want[2]) {
		t.Errorf("GetDrop(3) = %+v, %v", d, err)
	}
	header := *want[4] // a drop naming a page of another directory
	header.Text = ""
	if d, err := s.GetDropHeader(ctx, 5); err != nil || !reflect.DeepEqual(*d, header) {
		t.Errorf("GetDropHeader(5) = %+v, %v; want %+v", d, err, header)
	}
	if _, err := s.GetDropHeader(ctx, n+1); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetDropHeader(%d) = %v, want ErrNotFound", n+1, err)
	}

	var of2 []uint64
	if err := s.DropsOf(ctx, 2, func(d *Drop) error { of2 = append(of2, d.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(of2) != n/2 || of2[0] != 2 || of2[len(of2)-1] != n {
		t.Errorf("DropsOf(2) = %d drops from %v, want %d even IDs 2..%d", len(of2), of2[:min(3, len(of2))], n/2, n)
	}
	for i, id := range of2 {
		if id != uint64(2*(i+1)) {
			t.Fatalf("DropsOf(2)[%d] = %d, want %d", i, id, 2*(i+1))
		}
	}
	if err := s.DropsOf(ctx, 3, func(*Drop) error { return errors.New("page 3 has no drops") }); err != nil {
		t.Error(err)
	}
	groups := map[uint64]int{}
	if err := s.DropGroups(ctx, func(id uint64, k int) error { groups[id] = k; return nil }); err != nil {
		t.Fatal(err)
	}
	if want := map[uint64]int{1: n / 2, 2: n / 2}; !reflect.DeepEqual(groups, want) {
		t.Errorf("DropGroups = %v, want %v", groups, want)
	}
	if pages, drops, err := s.Counts(ctx); pages != 0 || drops != n || err != nil {
		t.Errorf("Counts = %d, %d, %v; want 0, %d", pages, drops, err, n)
	}
}

func TestDropTextRetention(t *testing.T) {
	ctx := context.Background()
	o := DefaultOptions()
	o.KeepDropText = false
	s, db := newStore(t, o)
	putDrop(t, s, db, sampleDrop(1, 1))
	d, err := s.DropByURL(ctx, sampleDrop(1, 1).URL)
	if err != nil || d.Text != "" || d.TextLen != 0 {
		t.Errorf("with KeepDropText=false: %+v, %v; want no text", d, err)
	}
}

func TestPutDropRejectsBadReason(t *testing.T) {
	s, db := newStore(t, DefaultOptions())
	d := sampleDrop(1, 1)
	d.Reason = "similar"
	if err := db.Update(func(tx *bolt.Tx) error { return s.PutDropTx(tx, d) }); err == nil {
		t.Error("PutDropTx with reason \"similar\" succeeded")
	}
}

// A drop record damaged so that it still decodes, with its reason or URL
// gone, is an error when read (crawl repair then counts it lost), not a
// drop with no reason that cannot be recorded again.
func TestDamagedDropRecordIsAnError(t *testing.T) {
	ctx := context.Background()
	for _, damage := range []func(*dropRecord){
		func(r *dropRecord) { r.Reason = "" },
		func(r *dropRecord) { r.Reason = "nearly" },
		func(r *dropRecord) { r.URL = "" },
	} {
		s, db := newStore(t, DefaultOptions())
		d := sampleDrop(1, 1)
		putDrop(t, s, db, d)
		err := db.Update(func(tx *bolt.Tx) error {
			b, err := s.buckets(tx)
			if err != nil {
				return err
			}
			var r dropRecord
			if err := decodeRecord(b.drops.Get(itob(d.ID)), &r); err != nil {
				return err
			}
			damage(&r)
			v, err := encodeRecord(r)
			if err != nil {
				return err
			}
			return b.drops.Put(itob(d.ID), v)
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetDrop(ctx, d.ID); err == nil || !strings.Contains(err.Error(), "damaged record") {
			t.Errorf("GetDrop of a damaged record: %v, want a damaged record error", err)
		}
		if _, err := s.GetDropHeader(ctx, d.ID); err == nil {
			t.Errorf("GetDropHeader of a damaged record: no error")
		}
		if err := s.DropHeaders(ctx, func(*Drop) error { return nil }); err == nil {
			t.Errorf("DropHeaders over a damaged record: no error")
		}
	}
}
