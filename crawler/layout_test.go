package crawler

import (
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/contentseen"
)

// recordedLayout returns the layout the data directory's index records.
func recordedLayout(t *testing.T, dir string) string {
	t.Helper()
	d, err := OpenData(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var layout string
	if err := d.DB.View(func(tx *bolt.Tx) error {
		layout, _, _ = contentseen.ReadBoltMeta(tx, "")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return layout
}

// "auto" chooses the layout for the expected size when it creates the
// index, and afterwards reopens with whatever the index records.
func TestLayoutAuto(t *testing.T) {
	open := func(dir string, o Options) error {
		o.DataDir, o.K = dir, 3
		c, err := Open(o)
		if err != nil {
			return err
		}
		return c.Close()
	}
	for _, tc := range []struct {
		name     string
		expected int64
		want     string
	}{
		{"default expected pages", 0, contentseen.Layout4x16},
		{"100M pages", 1e8, contentseen.Layout10x28},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := open(dir, Options{Layout: LayoutAuto, ExpectedPages: tc.expected}); err != nil {
				t.Fatal(err)
			}
			if got := recordedLayout(t, dir); got != tc.want {
				t.Fatalf("auto with %d expected pages created layout %s, want %s", tc.expected, got, tc.want)
			}
			// Reopening with auto and another size keeps the recorded layout.
			if err := open(dir, Options{Layout: LayoutAuto, ExpectedPages: 1e12}); err != nil {
				t.Fatalf("reopen with auto: %v", err)
			}
			if got := recordedLayout(t, dir); got != tc.want {
				t.Errorf("after reopening with auto the index records %s, want %s", got, tc.want)
			}
			// Naming the recorded layout works; another one is refused with a hint.
			if err := open(dir, Options{Layout: tc.want}); err != nil {
				t.Errorf("reopen with layout %s: %v", tc.want, err)
			}
			other := contentseen.LayoutGoogle16
			err := open(dir, Options{Layout: other})
			if err == nil || !strings.Contains(err.Error(), "contentseen.layout="+tc.want+" (or auto)") {
				t.Errorf("reopen with layout %s: err = %v, want a hint naming %s or auto", other, err, tc.want)
			}
		})
	}
}

// k above what the recorded layout answers (4x16: 19, by multi-probe) is
// refused with auto too, k = 5 is answered by the 4x16 index as it is, and
// a new index for k = 5 gets a generated layout.
func TestLayoutAutoLargerK(t *testing.T) {
	dir := t.TempDir()
	c, err := Open(Options{DataDir: dir, K: 3, Layout: LayoutAuto})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = Open(Options{DataDir: dir, K: 20, Layout: LayoutAuto})
	if err == nil || !strings.Contains(err.Error(), "exceeds layout 4x16") {
		t.Errorf("k=20 on a 4x16 index with auto: err = %v, want 'exceeds layout 4x16'", err)
	}
	c, err = Open(Options{DataDir: dir, K: 5, Layout: LayoutAuto})
	if err != nil {
		t.Fatalf("k=5 on a 4x16 index with auto: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	dir = t.TempDir()
	c, err = Open(Options{DataDir: dir, K: 5, Layout: LayoutAuto, ExpectedPages: 1e6})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	want, err := contentseen.ChooseLayout(5, 1e6)
	if err != nil {
		t.Fatal(err)
	}
	if got := recordedLayout(t, dir); got != want.Name() {
		t.Errorf("auto for k=5 created layout %s, want %s", got, want.Name())
	}
}

// "auto" with the crawler's candidate radius (contentseen.k = 7) and the
// default expected pages creates 4x16, read by multi-probe, as the
// default layout would; it created 36 tables before ChooseLayout weighed
// multi-probe layouts.
func TestLayoutAutoJudgeRadius(t *testing.T) {
	dir := t.TempDir()
	c, err := Open(Options{DataDir: dir, K: 7, Layout: LayoutAuto})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if got := recordedLayout(t, dir); got != contentseen.Layout4x16 {
		t.Errorf("auto for k=7 and %d expected pages created layout %s, want %s", DefaultExpectedPages, got, contentseen.Layout4x16)
	}
}
