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
	// Registered before NotifyContext's: a signal that cancels ctx has
	// reached sig too, so abortOnSecondSignal announces the stop.
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	announced := make(chan struct{})
	go abortOnSecondSignal(sig, stoppingMessage(os.Args[1:]), announced)

	err := NewMain().Run(ctx, os.Args[1:])
	if ctx.Err() != nil {
		<-announced // "stopping ..." before the outcome, not after it
	}
	stop()
	os.Exit(report(os.Stderr, err)) // the statuses are in exit.go
}

// abortOnSecondSignal says what the first Ctrl-C does, closes announced,
// and exits at once on a second Ctrl-C: the first one asks for a drain,
// which may take up to the request timeout. bbolt's commits are atomic,
// so an abort loses at most the pages in flight. Every signal reaches both
// sig and NotifyContext's channel, so the second one here is the second
// Ctrl-C however quickly it follows the first.
func abortOnSecondSignal(sig <-chan os.Signal, stopping string, announced chan<- struct{}) {
	<-sig
	fmt.Fprintln(os.Stderr, stopping)
	close(announced)
	<-sig
	fmt.Fprintln(os.Stderr, "crawl: aborted")
	os.Exit(exitInterrupt)
}
