package frontier

import (
	"context"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Queue is the frontier as a crawler drives it outside a bbolt transaction:
// the to-do list and URL-seen set of one crawl, which may be private to a
// process (*Frontier) or shared by many worker processes
// (frontier/redisfrontier). Implementations are safe for concurrent use.
//
// The contract, which frontiertest.Run checks for every implementation:
//
//   - URL-seen: Add queues a URL only if the crawl never saw it in any state
//     (pending, in flight, done, failed, aliased), so every URL is handed out
//     by Next once, apart from Retry and from a worker that dies holding it
//     (a shared queue hands it out again after its lease expires).
//   - Politeness: Next hands out at most Options.PerHostInFlight URLs of one
//     host (HostKey) at a time, and two request starts to one host are at
//     least HostDelay apart, as measured by the queue's clock.
//   - Order: among hosts that politeness allows now, Next takes the lowest
//     depth first, then the oldest URL (breadth-first as far as politeness
//     permits).
//   - Completion: a URL handed out by Next is completed by exactly one of
//     Finish (or Done), Retry or Fail. Completing a URL that is not in flight
//     for this queue returns an error wrapping ErrNotInFlight and changes
//     nothing.
//   - Drained: Next returns ErrDrained when nothing is pending and nothing is
//     in flight (for a shared queue: in flight anywhere, under a live lease);
//     while something is in flight Next waits, since the page may have links.
//   - Close makes blocked and future Next calls return ErrClosed; the other
//     methods keep working so in-flight pages can be completed.
//
// Errors are wrapped with the operation; callers test them with errors.Is.
type Queue interface {
	// Add queues the items whose URLs were never seen, skipping repeats, and
	// returns how many it queued. URLs must be canonical (Canonical). If any
	// item is invalid (ErrBadURL) nothing is added.
	Add(ctx context.Context, items ...Item) (added int, err error)

	// Next blocks until a URL may be fetched under the politeness rules,
	// marks it in flight and returns it. It returns ErrDrained, ErrClosed or
	// ctx.Err(); a shared queue waits and retries while its server is
	// unreachable rather than failing.
	Next(ctx context.Context) (Item, error)

	// Finish marks it done with outcome (such as "stored", "dropped",
	// "skipped:non-html") and queues links (as Add does) in one atomic step:
	// either both happen or neither. links may be nil.
	Finish(ctx context.Context, it Item, outcome string, links []Item) error

	// Done is Finish without links.
	Done(ctx context.Context, it Item, outcome string) error

	// Retry puts it back to pending with Attempts+1 and LastError = reason,
	// not to be handed out before after has passed. The attempts counted
	// are the queue's record, not the item's: pass the item Next returned.
	Retry(ctx context.Context, it Item, after time.Duration, reason string) error

	// Fail records it as failed with reason; it is never handed out again.
	Fail(ctx context.Context, it Item, reason string) error

	// Alias records url, a canonical URL reached without being queued (a
	// redirect target), as done with outcome so it is never queued. It
	// returns seen=true and changes nothing if url was already known.
	Alias(ctx context.Context, url, outcome string) (seen bool, err error)

	// SetHostDelay raises the gap between request starts to hostKey to d
	// (a robots.txt Crawl-delay, capped by the caller); the larger of it and
	// Options.PerHostDelay applies. A shared queue applies it to every
	// worker, at the latest with this worker's next call.
	SetHostDelay(hostKey string, d time.Duration)

	// HostDelay returns the gap kept between request starts to hostKey as
	// far as this process knows.
	HostDelay(hostKey string) time.Duration

	// Stats returns counts without blocking: a shared queue returns those
	// its newest call saw, so they may lag other workers by one call.
	Stats() Stats

	// State returns the state of a canonical URL: "pending", "inflight",
	// "done:<outcome>", "failed:<reason>", or "" if it was never seen.
	State(ctx context.Context, url string) (string, error)

	// Close stops Next (see above). It is idempotent.
	Close() error
}

var _ Queue = (*Frontier)(nil)

// Finish is DoneTx and AddTx of links in one transaction: if it is not in
// flight, nothing is added.
func (f *Frontier) Finish(ctx context.Context, it Item, outcome string, links []Item) error {
	return f.update(ctx, func(tx *bolt.Tx) error {
		if len(links) > 0 {
			if _, err := f.AddTx(tx, links...); err != nil {
				return err
			}
		}
		return f.DoneTx(tx, it, outcome)
	})
}

// Alias is AliasTx in its own transaction.
func (f *Frontier) Alias(ctx context.Context, url, outcome string) (seen bool, err error) {
	err = f.update(ctx, func(tx *bolt.Tx) error {
		seen, err = f.AliasTx(tx, url, outcome)
		return err
	})
	return seen, err
}

// Validate checks cheaply what Add checks of an item: an absolute http(s)
// URL with a host, no fragment or white space, at most MaxURLLength bytes,
// and a depth in range. The error wraps ErrBadURL. Other Queue
// implementations call it so that every queue accepts the same items.
func Validate(it Item) error { return validate(it) }
