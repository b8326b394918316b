package crawler

import (
	"os"
	"strconv"
	"strings"

	"github.com/simcrawl/simcrawl/contentseen"
)

// The crawl's mapped pages. Each commit reads the last pages of the
// buckets it appends to (page texts, bodies, the frontier, the index's
// delta), and the kernel maps the cached pages around a faulted one too:
// the pages the crawl writes stay mapped. A crawl of 70,000 small pages
// against a 10M index peaked at 637 MB resident, about 320 MB of it its
// own stored pages (internal/crawlbench -index). So every releaseEvery
// bytes of pages written, the crawler reads how much of files it has
// mapped and, past mappedBudget, drops the database's pages from its
// mapping (contentseen.ReleaseMapped): they stay in the page cache, and
// what is read again faults back in. Below the budget this costs a read
// of /proc every 4 MiB written; above it, the index's blocks fault back
// in as queries need them. The same crawl then peaked at 226 MB resident,
// for 2.42 ms of CPU per page against 2.36 (releasing every 16 MiB
// written, whatever the budget: 108 MB and 2.61 ms).
const (
	releaseEvery = 4 << 20
	mappedBudget = 192 << 20
)

// releaseWritten runs the check above after a commit. Errors only cost
// memory: logged, not returned. The caller holds commitMu.
func (c *Crawler) releaseWritten() {
	st := c.db.Stats()
	a := st.TxStats.GetPageAlloc()
	if a-c.releasedAt < c.releaseEvery {
		return
	}
	c.releasedAt = a
	if n, ok := mappedFileBytes(); !ok || n <= c.mappedBudget {
		return
	}
	c.releases++
	if err := contentseen.ReleaseMapped(c.db); err != nil {
		c.opts.Logger.Warn("crawler: mapped pages not released", "err", err)
	}
}

// mappedFileBytes returns the bytes of file pages this process has mapped
// in (RssFile of /proc/self/status), or false where there is no such file.
func mappedFileBytes() (int64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}
