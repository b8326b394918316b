package crawler

import (
	"testing"

	"github.com/simcrawl/simcrawl/internal/redistest"
)

// TestIndexMemoryWhereTheIndexJudges checks that only a crawler whose
// judge looks up its own index holds the index's tables in memory
// (Options.IndexMemory): not one that judges nothing (ContentSeenOff) nor
// a worker of a distributed crawl, whose judge looks up the shared index
// and whose own index only takes its pages (an exact look-up each).
func TestIndexMemoryWhereTheIndexJudges(t *testing.T) {
	holds := func(c *Crawler) bool {
		t.Helper()
		h := c.index.HoldsTablesInMemory()
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		return h
	}
	open := func(opts Options) *Crawler {
		t.Helper()
		c, err := Open(opts)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if !holds(open(testOptions(t, "http://example.test/"))) {
		t.Error("a crawl with IndexMemory does not hold its index's tables in memory")
	}
	off := testOptions(t, "http://example.test/")
	off.ContentSeenOff = true
	if holds(open(off)) {
		t.Error("a crawl with ContentSeenOff holds its index's tables in memory")
	}
	srv := redistest.Start(t)
	w := distWorker(t, srv.Addr(), "t-indexmemory", "worker-a", sharedIndex(t), "http://example.test/")
	if w.opts.IndexMemory == 0 {
		t.Fatal("the worker's options ask for no index memory: the test checks nothing")
	}
	if holds(w) {
		t.Error("a worker of a distributed crawl holds its own index's tables in memory")
	}
}
