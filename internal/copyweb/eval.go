package copyweb

import (
	"context"
	"fmt"
	"os"

	"github.com/simcrawl/simcrawl/crawler"
)

// Bounded is the web the CI test crawls: every same-template page, 50
// more originals and 8 copies of each kind, about 250 pages.
var Bounded = Config{Seed: 1, Originals: 50, PerKind: 8, ShortPages: 12}

// Big takes every usable corpus page as an original and makes 60 copies of
// each kind: a few thousand pages, minutes of crawling.
var Big = Config{Seed: 1, Originals: 0, PerKind: 60, ShortPages: 40}

// Evaluate generates the web of cfg from the corpus under corpusDir,
// crawls it with opts (CrawlOptions when nil; seed and data directory are
// set here) into a new temporary data directory under tmpDir (removed
// afterwards), and scores the outcome.
func Evaluate(ctx context.Context, corpusDir, tmpDir string, cfg Config, opts *crawler.Options) (*Web, *Report, error) {
	sources, err := LoadCorpus(corpusDir)
	if err != nil {
		return nil, nil, err
	}
	w, err := Generate(sources, cfg)
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp(tmpDir, "copyweb-")
	if err != nil {
		return nil, nil, fmt.Errorf("copyweb: %w", err)
	}
	out, err := Crawl(ctx, w, dir, opts)
	if rerr := os.RemoveAll(dir); err == nil && rerr != nil {
		err = fmt.Errorf("copyweb: %w", rerr)
	}
	if err != nil {
		return nil, nil, err
	}
	return w, Score(w, out), nil
}
