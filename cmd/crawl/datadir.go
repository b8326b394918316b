package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// checkDataDir explains a data directory that cannot be one, before
// anything tries to create or open it: a path naming a file, or one below
// a file. A missing directory is fine (a crawl creates it).
func checkDataDir(dir string) error {
	for p := filepath.Clean(dir); ; {
		fi, err := os.Stat(p)
		switch {
		case err == nil && fi.IsDir():
			return nil
		case err == nil && p == filepath.Clean(dir):
			return fmt.Errorf("the data directory %s is a file: pass a directory with --data DIR (a new one is created)", dir)
		case err == nil:
			return fmt.Errorf("the data directory %s cannot be created, since %s is a file: pass a directory with --data DIR", dir, p)
		}
		// Missing, below a file (ENOTDIR) or unreadable: look at the
		// parent; anything else is for the open to say.
		parent := filepath.Dir(p)
		if parent == p {
			return nil
		}
		p = parent
	}
}

// checkCrawledDir explains a data directory that a reading command (stats,
// dups, failed, export, check, repair, serve) cannot read: one that does
// not exist, or a file. Unlike a crawl, these never create one, and a typo
// is not damage.
func checkCrawledDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("no data directory %s: crawl into it first (crawl --seeds FILE --data %s), or name another with --data DIR", dir, dir)
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s is a file: pass the data directory of a crawl with --data DIR", dir)
	}
	return nil
}
