// Command crawl is the Simcrawl web crawler with inline near-duplicate
// detection. Run `crawl help` for the commands; the program itself is the
// Main type, which tests drive end to end.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go abortOnSecondSignal(stoppingMessage(os.Args[1:]))

	err := NewMain().Run(ctx, os.Args[1:])
	stop()
	os.Exit(report(os.Stderr, err)) // the statuses are in exit.go
}

// abortOnSecondSignal exits at once on a second Ctrl-C: the first one asks
// for a drain, which may take up to the request timeout. bbolt's commits are
// atomic, so an abort loses at most the pages in flight.
func abortOnSecondSignal(stopping string) {
	// Registered before the first signal: every signal reaches both this
	// channel and NotifyContext's, so the second one here is the second
	// Ctrl-C however quickly it follows the first.
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	fmt.Fprintln(os.Stderr, stopping)
	<-sig
	fmt.Fprintln(os.Stderr, "crawl: aborted")
	os.Exit(exitInterrupt)
}
