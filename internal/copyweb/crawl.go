package copyweb

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/storage"
)

// CrawlOptions are the options `crawl --seeds` builds from the default
// config (cmd/crawl's defaultConfig), with the delay between requests set
// to zero as `crawl demo` does for its loopback server. Keep them in step
// with the defaults: the harness measures what a user gets.
func CrawlOptions(seed, dataDir string) (crawler.Options, error) {
	feat, err := contentseen.ParseOptions("words")
	if err != nil {
		return crawler.Options{}, fmt.Errorf("copyweb: %w", err)
	}
	fetch := crawler.DefaultFetchOptions()
	fetch.RobotsTTL = 0 // the config has no key for it: the crawler's default
	return crawler.Options{
		Seeds:         []string{seed},
		DataDir:       dataDir,
		MaxDepth:      5,
		Parallelism:   8,
		PerHost:       2,
		MaxCrawlDelay: 30 * time.Second,
		Retries:       3,
		RetryBackoff:  2 * time.Second,
		Fetch:         fetch,
		K:             7,
		ShortK:        crawler.DefaultShortK,
		ShortFeatures: crawler.DefaultShortFeatures,
		Thresholds:    contentseen.DefaultThresholds(),
		Layout:        "4x16",
		ExpectedPages: crawler.DefaultExpectedPages,
		IndexMemory:   crawler.DefaultIndexMemory,
		Features:      feat,
		KeepDropText:  true,
	}, nil
}

// An Outcome is what the crawl did with one page of the web.
type Outcome struct {
	Stored      bool
	StoreID     uint64 // order of storing
	Fingerprint uint64 // of a stored page
	Dropped     bool
	DuplicateOf string // ID of the page it was dropped as a copy of ("?" when not of the web)
	Distance    int
	Reason      string
}

// Crawl serves w on a loopback httptest server, crawls it from the home
// page into dataDir with opts (CrawlOptions when nil), and returns what
// happened to each page by ID, read from the store and the drop log.
func Crawl(ctx context.Context, w *Web, dataDir string, opts *crawler.Options) (map[string]*Outcome, error) {
	srv := httptest.NewServer(w.Handler())
	defer srv.Close()
	seed := srv.URL + w.Page(HomeID).Path()
	var o crawler.Options
	if opts == nil {
		var err error
		if o, err = CrawlOptions(seed, dataDir); err != nil {
			return nil, err
		}
	} else {
		o = *opts
		o.Seeds, o.DataDir = []string{seed}, dataDir
	}
	c, err := crawler.Open(o)
	if err != nil {
		return nil, fmt.Errorf("copyweb: %w", err)
	}
	_, err = c.Run(ctx)
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("copyweb: crawl: %w", err)
	}
	return readOutcomes(ctx, dataDir, o.DropLog)
}

func pageID(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Path != "/w" {
		return "?"
	}
	return u.Query().Get("p")
}

func readOutcomes(ctx context.Context, dir, dropLog string) (map[string]*Outcome, error) {
	out := map[string]*Outcome{}
	d, err := crawler.OpenData(dir, time.Second)
	if err != nil {
		return nil, fmt.Errorf("copyweb: %w", err)
	}
	err = d.Store.PageHeaders(ctx, func(p *storage.Page) error {
		out[pageID(p.URL)] = &Outcome{Stored: true, StoreID: p.ID, Fingerprint: p.Fingerprint}
		return nil
	})
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("copyweb: read store: %w", err)
	}
	if dropLog == "" {
		dropLog = filepath.Join(dir, "dropped.jsonl")
	}
	f, err := os.Open(dropLog)
	if err != nil {
		return nil, fmt.Errorf("copyweb: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var r struct {
			URL         string `json:"url"`
			DuplicateOf string `json:"duplicate_of"`
			Distance    int    `json:"distance"`
			Reason      string `json:"reason"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("copyweb: drop log %s: %w", dropLog, err)
		}
		id := pageID(r.URL)
		if out[id] != nil {
			return nil, errors.New("copyweb: page " + id + " both stored and dropped")
		}
		out[id] = &Outcome{Dropped: true, DuplicateOf: pageID(r.DuplicateOf), Distance: r.Distance, Reason: r.Reason}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("copyweb: drop log %s: %w", dropLog, err)
	}
	return out, nil
}
