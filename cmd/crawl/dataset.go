package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/simcrawl/simcrawl/crawler"
)

// addReadFlags registers the flags of a command that reads a crawl
// (export, dups, stats, failed): those of addConfigFlags, with --data
// repeatable, since a distributed crawl leaves one data directory per
// worker.
func (m *Main) addReadFlags(fset *flag.FlagSet, cf *configFlags) {
	fset.StringVar(&cf.config, "config", "", "config file (default: ./config.yaml when it exists, else built-in defaults)")
	fset.Var(&cf.dirs, "data", "data directory (overrides the config's data key; repeat it to read the directories of the\nworkers of one distributed crawl as one crawl)")
	fset.Var(&cf.sets, "set", "override a config key, e.g. --set fetch.delay=250ms (repeatable)")
}

// openDataSet loads the configuration and opens the data directories of a
// reading command read-only: every --data, else the config's data key. A
// directory named twice is a usage error; one that is missing, a file,
// damaged or held by a running crawl fails as it does alone, named.
func (m *Main) openDataSet(fset *flag.FlagSet, cf configFlags, cmd string) (*crawler.DataSet, Config, error) {
	cfg, err := cf.load()
	if err != nil {
		return nil, cfg, err
	}
	dirs := []string(cf.dirs)
	if len(dirs) == 0 {
		dirs = []string{cfg.Data}
	}
	for i, dir := range dirs {
		if err := checkCrawledDir(dir); err != nil {
			return nil, cfg, fmt.Errorf("%s: %w", cmd, err)
		}
		for _, prev := range dirs[:i] {
			if sameDir(prev, dir) {
				return nil, cfg, usageErrorf(fset, "%s: --data %s names the directory of --data %s again: give each data directory once", cmd, dir, prev)
			}
		}
	}
	set, err := crawler.OpenDataSet(dirs, 0)
	if err != nil {
		return nil, cfg, fmt.Errorf("%s: %w", cmd, err)
	}
	return set, cfg, nil
}

// sameDir reports whether a and b name one directory (after checkCrawledDir
// found both), spelled alike or not.
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// dirNames is the set's directories as given, for "read from" lines.
func dirNames(set *crawler.DataSet) string {
	names := make([]string, len(set.Dirs))
	for i, d := range set.Dirs {
		names[i] = d.Dir
	}
	return strings.Join(names, ", ")
}
