package crawler

import (
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/contentseen"
)

// LayoutAuto as Options.Layout opens the data directory's index with the
// layout it records, and creates a new index with the layout
// contentseen.ChooseLayout picks for Options.K and Options.ExpectedPages.
const LayoutAuto = "auto"

// DefaultExpectedPages is Options.ExpectedPages when it is 0: ten million
// pages, where the default layout 4x16 is the choice (ChooseLayout keeps
// it up to 16.8M for k = 3, and from about 500,000 to 220M for k = 7), so
// "auto" with the default creates the same index as the default layout; a
// crawl that expects more or fewer says so.
const DefaultExpectedPages = 10_000_000

// namedLayout returns the layout called name if it can find every match
// within k bits.
func namedLayout(name string, k int) (contentseen.Layout, error) {
	layout, err := contentseen.LayoutByName(name)
	if err != nil {
		return contentseen.Layout{}, fmt.Errorf("crawler: %w", err)
	}
	if k > layout.MaxK() {
		return contentseen.Layout{}, fmt.Errorf("crawler: k = %d exceeds layout %s, which answers k <= %d", k, layout.Name(), layout.MaxK())
	}
	return layout, nil
}

// autoLayout returns the layout the index in db records, or for a data
// directory without an index the one chosen for k and expected pages.
func autoLayout(db *bolt.DB, k int, expected int64) (contentseen.Layout, error) {
	var recorded string
	var ok bool
	if err := db.View(func(tx *bolt.Tx) error {
		recorded, _, ok = contentseen.ReadBoltMeta(tx, "")
		return nil
	}); err != nil {
		return contentseen.Layout{}, fmt.Errorf("crawler: read the index's layout: %w", err)
	}
	if ok {
		return namedLayout(recorded, k)
	}
	layout, err := contentseen.ChooseLayout(k, expected)
	if err != nil {
		return contentseen.Layout{}, fmt.Errorf("crawler: %w", err)
	}
	return layout, nil
}
