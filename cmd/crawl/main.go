// Command crawl is the Simcrawl web crawler with inline near-duplicate
// detection. Run `crawl help` for the commands; the program itself is the
// Main type, which tests drive end to end.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go abortOnSecondSignal(ctx)

	err := NewMain().Run(ctx, os.Args[1:])
	switch {
	case err == nil:
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(os.Stderr, "crawl: interrupted; state saved, rerun the same command to resume")
		os.Exit(130)
	default:
		fmt.Fprintln(os.Stderr, "crawl:", err)
		os.Exit(1)
	}
}

// abortOnSecondSignal exits at once on a second Ctrl-C: the first one asks
// for a drain, which may take up to the request timeout. bbolt's commits are
// atomic, so an abort loses at most the pages in flight.
func abortOnSecondSignal(ctx context.Context) {
	<-ctx.Done()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	fmt.Fprintln(os.Stderr, "crawl: aborted")
	os.Exit(130)
}
