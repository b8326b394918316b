package main

import (
	"context"
	"fmt"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/crawler"
)

// runRepair is `crawl repair`: it writes a new data directory from what
// can be read of a damaged one, never writing to the original.
func (m *Main) runRepair(ctx context.Context, args []string) error {
	fset := m.newFlagSet("repair")
	out := fset.String("out", "", "the new data directory to write (must not exist, or be empty)")
	var cf configFlags
	m.addConfigFlags(fset, &cf)
	if err := fset.Parse(args); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		return usageErrorf(fset, "repair: unexpected argument %q", fset.Arg(0))
	}
	if *out == "" {
		return usageErrorf(fset, "repair: --out NEWDIR is required (the original directory is never written to)")
	}
	cfg, err := cf.load()
	if err != nil {
		return err
	}
	if err := checkCrawledDir(cfg.Data); err != nil {
		return fmt.Errorf("repair: %w", err)
	}
	// The index is rebuilt with the source's layout and scheme; these are
	// for a source whose index metadata cannot be read.
	feat, err := contentseen.ParseOptions(cfg.ContentSeen.Features)
	if err != nil {
		return fmt.Errorf("repair: config: contentseen.features: %w", err)
	}
	layout := contentseen.DefaultLayout()
	if l, err := contentseen.LayoutByName(cfg.ContentSeen.Layout); err == nil {
		layout = l
	}
	sum, err := crawler.Repair(ctx, cfg.Data, *out, layout, feat.String())
	if err != nil {
		return fmt.Errorf("repair: %w", err)
	}
	w := m.Stdout
	if len(sum.Damage) == 0 {
		fmt.Fprintf(w, "bbolt structure of %s: sound\n", cfg.Data)
	} else {
		fmt.Fprintf(w, "bbolt structure of %s: %d problem%s, the pages past them skipped:\n", cfg.Data, len(sum.Damage), plural(len(sum.Damage)))
		for _, d := range sum.Damage {
			fmt.Fprintf(w, "  - %s\n", d)
		}
	}
	fmt.Fprintf(w, "key/value pairs read:  %d\n", sum.SalvagedKeys)
	bodies, texts := "", ""
	if sum.BodiesLost > 0 {
		bodies = fmt.Sprintf(" (%d without the raw body and header, which did not decode: export has no HTML for them)", sum.BodiesLost)
	}
	if sum.DropTextsLost > 0 {
		texts = fmt.Sprintf(" (%d without the dropped page's text, which did not decode: dups show cannot diff them)", sum.DropTextsLost)
	}
	fmt.Fprintf(w, "pages:    %d copied%s, %d unreadable or lost\n", sum.Pages, bodies, sum.PagesLost)
	fmt.Fprintf(w, "drops:    %d copied%s, %d unreadable or naming a lost page\n", sum.Drops, texts, sum.DropsLost)
	fmt.Fprintf(w, "index:    rebuilt from the pages: %d fingerprints, layout %s, features %s\n", sum.Indexed, sum.Layout, sum.Scheme)
	fmt.Fprintf(w, "frontier: %d done, %d failed, %d pending (%d of them queued again: done, but their page or drop was lost); %d URLs or records left out\n",
		sum.Frontier.Done, sum.Frontier.Failed, sum.Frontier.Pending, sum.Frontier.Requeued, sum.Frontier.Lost)
	fmt.Fprintf(w, "drop log: written from the store (%d lines)\n", sum.Drops)
	if err := sum.Check.Err(); err != nil {
		return fmt.Errorf("repair: the new directory %s does not check clean: %w", *out, err)
	}
	fmt.Fprintf(m.Stderr, "wrote %s; it checks clean. Crawl on with --data %s (the original %s is unchanged)\n", *out, *out, cfg.Data)
	return nil
}
