package crawler

import "time"

// LiveData returns the running crawl's own database as a Data, for a view
// served by the crawling process (crawl --ui): bbolt runs read transactions
// beside the crawl's writes in one process, and each read sees the state of
// the last commit. Its Close does nothing; stop using it before the
// Crawler's Close. Safe for concurrent use, like Data.
func (c *Crawler) LiveData() *Data {
	return &Data{DB: c.db, Store: c.store, Dir: c.opts.DataDir, borrowed: true}
}

// HostDelay returns the gap the running crawl keeps between requests to
// host (frontier.HostKey): the configured delay, or a robots.txt
// Crawl-delay when larger. Safe for concurrent use.
func (c *Crawler) HostDelay(host string) time.Duration { return c.queue.HostDelay(host) }
