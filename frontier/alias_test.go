package frontier

import (
	"context"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func TestAliasTx(t *testing.T) {
	ctx := context.Background()
	f, db, _ := newFrontier(t, Options{PerHostDelay: -1})
	if _, err := f.Add(ctx, Item{URL: "http://a.example/queued"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		url      string
		wantSeen bool
	}{
		{"http://a.example/queued", true},  // pending: fetched on its own
		{"http://a.example/target", false}, // new: recorded as done
		{"http://a.example/target", true},  // now known
	} {
		var seen bool
		err := db.Update(func(tx *bolt.Tx) error {
			var err error
			seen, err = f.AliasTx(tx, tc.url, "alias-of:http://a.example/old")
			return err
		})
		if err != nil {
			t.Fatalf("AliasTx(%s): %v", tc.url, err)
		}
		if seen != tc.wantSeen {
			t.Errorf("AliasTx(%s) seen = %v, want %v", tc.url, seen, tc.wantSeen)
		}
	}
	if st, err := f.State(ctx, "http://a.example/target"); err != nil || st != "done:alias-of:http://a.example/old" {
		t.Errorf("State(target) = %q, %v", st, err)
	}
	if n, err := f.Add(ctx, Item{URL: "http://a.example/target"}); err != nil || n != 0 {
		t.Errorf("Add(alias) added %d, %v; want 0: an alias is never queued", n, err)
	}
	if s := f.Stats(); s.Done != 1 || s.Pending != 1 {
		t.Errorf("Stats = %+v, want 1 done (the alias), 1 pending", s)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := f.AliasTx(tx, "not a url", "x")
		return err
	}); err == nil {
		t.Error("AliasTx accepted a non-canonical URL")
	}
}
