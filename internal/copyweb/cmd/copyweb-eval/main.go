// Command copyweb-eval crawls the web of copies built from ../shared/corpus
// with the default crawl options and prints precision and recall per kind
// of copy, without judging them: the measuring tool for the issue's
// thresholds (the test TestQualityCopies fails below them).
//
//	go run ./internal/copyweb/cmd/copyweb-eval             # the bounded web of the CI test
//	go run ./internal/copyweb/cmd/copyweb-eval -big -misses  # every corpus page, each wrong decision listed
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/internal/copyweb"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "copyweb-eval:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("copyweb-eval", flag.ContinueOnError)
	corpus := fs.String("corpus", "../shared/corpus", "corpus directory")
	big := fs.Bool("big", false, "every usable corpus page and 60 copies per kind (minutes)")
	seed := fs.Uint64("seed", 1, "seed of the web")
	misses := fs.Bool("misses", false, "list every wrong decision")
	truth := fs.String("truth", "", "write the ground truth (TSV) to this file")
	k := fs.Int("k", -1, "near-duplicate threshold instead of the default's")
	layout := fs.String("layout", "", "index layout instead of the default's (a larger k needs one)")
	curve := fs.Bool("short-curve", false, "print recall and false drops per radius on short-text pairs built from the corpus, instead of crawling")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *curve {
		return shortCurve(*corpus, *seed)
	}
	cfg := copyweb.Bounded
	if *big {
		cfg = copyweb.Big
	}
	cfg.Seed = *seed
	opts, err := copyweb.CrawlOptions("", "")
	if err != nil {
		return err
	}
	if *k >= 0 {
		opts.K = *k
	}
	if *layout != "" {
		opts.Layout = *layout
	}
	w, rep, err := copyweb.Evaluate(ctx, *corpus, "", cfg, &opts)
	if err != nil {
		return err
	}
	if *truth != "" {
		if err := writeTruth(w, *truth); err != nil {
			return err
		}
	}
	if err := rep.WriteTable(os.Stdout); err != nil {
		return err
	}
	if *misses {
		fmt.Println()
		return rep.WriteMisses(os.Stdout)
	}
	return nil
}

func writeTruth(w *copyweb.Web, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := w.WriteTruth(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// shortCurve prints the radius curve of copyweb.ShortPairs under the
// default options, per bucket of the judged text's feature count.
func shortCurve(corpus string, seed uint64) error {
	src, err := copyweb.LoadCorpus(corpus)
	if err != nil {
		return err
	}
	pairs := copyweb.ShortPairs(src, seed, 3)
	opts, err := copyweb.CrawlOptions("", "")
	if err != nil {
		return err
	}
	f, err := contentseen.NewFingerprinter(opts.Features)
	if err != nil {
		return err
	}
	rows, err := copyweb.RadiusCurve(pairs, f, opts.Thresholds, []int{50, 100, 150, 200, 250, 300, 400},
		[]int{5, 7, 8, 9, 10, 11, 12, 14})
	if err != nil {
		return err
	}
	fmt.Printf("%d short-text pairs from %s, seed %d\n", len(pairs), corpus, seed)
	return copyweb.WriteCurve(os.Stdout, rows)
}
