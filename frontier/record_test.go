package frontier

import (
	"context"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// Record keeps outcomes of URLs another queue completed with the counts
// and buckets CheckTx expects; a later record replaces an earlier one, and
// Forget removes a failed one.
func TestRecordAndForget(t *testing.T) {
	ctx := context.Background()
	f, db, _ := newFrontier(t, Options{PerHostDelay: -1})
	a, b := Item{URL: "http://a.example/x", Depth: 2}, Item{URL: "http://a.example/y", Depth: 1}
	for _, step := range []struct {
		it      Item
		outcome string
		failed  bool
	}{
		{a, "http 404", true},
		{b, "skipped:noindex", false},
		{a, "http 500", true},
		{b, "connection refused", true},
		{a, "skipped:robots", false},
	} {
		if err := f.Record(ctx, step.it, step.outcome, step.failed); err != nil {
			t.Fatal(err)
		}
	}
	check := func(wantDone, wantFailed int, wantReason string) {
		t.Helper()
		if err := db.View(func(tx *bolt.Tx) error {
			if err := CheckTx(tx, "", func(p string) { t.Errorf("check: %s", p) }); err != nil {
				return err
			}
			st, err := ReadStats(tx, "")
			if err != nil {
				return err
			}
			if st.Done != wantDone || st.Failed != wantFailed || st.Pending != 0 {
				t.Errorf("stats %+v, want done %d, failed %d, none pending", st, wantDone, wantFailed)
			}
			var reasons []string
			if err := ReadFailed(tx, "", func(u, r string) error { reasons = append(reasons, u+" "+r); return nil }); err != nil {
				return err
			}
			if want := []string{wantReason}; wantReason == "" && len(reasons) != 0 || wantReason != "" && (len(reasons) != 1 || reasons[0] != want[0]) {
				t.Errorf("failed %q, want %q", reasons, wantReason)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	check(1, 1, b.URL+" connection refused")
	if err := f.Forget(ctx, a.URL, b.URL); err != nil {
		t.Fatal(err)
	}
	check(1, 0, "")
}
