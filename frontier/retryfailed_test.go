package frontier

import (
	"context"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func TestRetryFailed(t *testing.T) {
	ctx := context.Background()
	f, db, _ := newFrontier(t, Options{PerHostDelay: -1})
	if _, err := f.Add(ctx, Item{URL: "http://a.example/x", Depth: 2, Source: "http://a.example/"}); err != nil {
		t.Fatal(err)
	}
	it, err := f.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Fail(ctx, it, "robots.txt unavailable"); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := db.View(func(tx *bolt.Tx) error {
		return ReadFailed(tx, "", func(url, reason string) error {
			got = append(got, url+" "+reason)
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != "http://a.example/x robots.txt unavailable" {
		t.Errorf("ReadFailed = %q", got)
	}
	n, err := f.RetryFailed(ctx)
	if err != nil || n != 1 {
		t.Fatalf("RetryFailed = %d, %v; want 1", n, err)
	}
	if s := f.Stats(); s.Failed != 0 || s.Pending != 1 {
		t.Errorf("Stats after RetryFailed = %+v, want 0 failed, 1 pending", s)
	}
	again, err := f.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again.URL != it.URL || again.Depth != 2 || again.Source != it.Source || again.Attempts != 0 {
		t.Errorf("requeued item = %+v, want %s at depth 2 from its source with attempts reset", again, it.URL)
	}
	if n, err := f.RetryFailed(ctx); err != nil || n != 0 {
		t.Errorf("second RetryFailed = %d, %v; want 0", n, err)
	}
}
