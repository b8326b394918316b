package frontier

import (
	"context"
	"maps"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestReadQueued checks the per-host counts of queued, retrying and
// in-flight URLs, and the failed items with their attempts.
func TestReadQueued(t *testing.T) {
	ctx := context.Background()
	f, db, _ := newFrontier(t, Options{PerHostDelay: -1, PerHostInFlight: 10})
	if _, err := f.Add(ctx,
		Item{URL: "http://a.example/1"}, Item{URL: "http://a.example/2"}, Item{URL: "http://a.example/3"},
		Item{URL: "http://b.example:8080/1"}); err != nil {
		t.Fatal(err)
	}
	retried, err := f.Next(ctx) // a.example/1: retried later
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Retry(ctx, retried, time.Hour, "timeout"); err != nil {
		t.Fatal(err)
	}
	failing, err := f.Next(ctx) // a.example/2: fails for good
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Fail(ctx, failing, "404 Not Found"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Next(ctx); err != nil { // left in flight
		t.Fatal(err)
	}
	var got map[string]int
	var failed []Item
	if err := db.View(func(tx *bolt.Tx) error {
		var err error
		if got, err = ReadQueued(tx, ""); err != nil {
			return err
		}
		return ReadFailedItems(tx, "", func(it Item) error { failed = append(failed, it); return nil })
	}); err != nil {
		t.Fatal(err)
	}
	// a.example: 1 retrying + 1 of {3 queued or in flight}; b.example: the other.
	want := map[string]int{"a.example": 2, "b.example:8080": 1}
	if !maps.Equal(got, want) {
		t.Errorf("ReadQueued = %v, want %v", got, want)
	}
	if len(failed) != 1 || failed[0].URL != "http://a.example/2" || failed[0].LastError != "404 Not Found" {
		t.Errorf("ReadFailedItems = %+v, want a.example/2 with its reason", failed)
	}
}

func TestHostDelay(t *testing.T) {
	f, _, _ := newFrontier(t, Options{PerHostDelay: 2 * time.Second})
	f.SetHostDelay("slow.example", 5*time.Second)
	f.SetHostDelay("eager.example", time.Second)
	for host, want := range map[string]time.Duration{
		"slow.example": 5 * time.Second, "eager.example": 2 * time.Second, "unknown.example": 2 * time.Second,
	} {
		if got := f.HostDelay(host); got != want {
			t.Errorf("HostDelay(%q) = %v, want %v", host, got, want)
		}
	}
}
