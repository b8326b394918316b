package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/simcrawl/simcrawl/crawler"
)

// runCheck is `crawl check`: it reads a data directory without changing it
// and says, part by part, what is sound and what is damaged; the error
// (exit 1) when anything is.
func (m *Main) runCheck(ctx context.Context, args []string) error {
	fset := m.newFlagSet("check")
	var cf configFlags
	m.addConfigFlags(fset, &cf)
	if err := fset.Parse(args); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		return usageErrorf(fset, "check: unexpected argument %q", fset.Arg(0))
	}
	cfg, err := cf.load()
	if err != nil {
		return err
	}
	if err := checkCrawledDir(cfg.Data); err != nil {
		return fmt.Errorf("check: %w", err)
	}
	// No crawl.db (an empty directory, or what a failed repair leaves) is
	// no crawl, as stats says, not damage for repair to mend.
	if _, err := os.Stat(filepath.Join(cfg.Data, crawler.DBFile)); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("check: no crawl data in %s: %w", cfg.Data, err)
	}
	rep, err := crawler.CheckData(ctx, cfg.Data, cfg.DropLog, 0)
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	n := 0
	for _, a := range rep.Areas {
		state := "ok"
		if len(a.Problems) > 0 {
			state = fmt.Sprintf("DAMAGED (%d problem%s)", len(a.Problems), plural(len(a.Problems)))
		}
		fmt.Fprintf(m.Stdout, "%-9s %s", a.Name, state)
		if a.Summary != "" {
			fmt.Fprintf(m.Stdout, ": %s", a.Summary)
		}
		fmt.Fprintln(m.Stdout)
		for _, p := range a.Problems {
			fmt.Fprintf(m.Stdout, "  - %s\n", p)
		}
		for _, note := range a.Notes {
			fmt.Fprintf(m.Stdout, "  note: %s\n", note)
		}
		n += len(a.Problems)
	}
	if n == 0 {
		fmt.Fprintf(m.Stderr, "%s is consistent\n", cfg.Data)
		return nil
	}
	var names []string
	for _, a := range rep.Areas {
		if len(a.Problems) > 0 {
			names = append(names, a.Name)
		}
	}
	return fmt.Errorf("check: %s is damaged (%s); nothing was changed. `crawl repair --data %s --out NEWDIR` writes what can be read into a new data directory",
		cfg.Data, strings.Join(names, ", "), cfg.Data)
}
