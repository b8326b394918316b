package redisindex

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/simcrawl/simcrawl/internal/redisconn"
)

// retry runs fn until it succeeds, fails for a reason other than an
// unreachable, loading or failing-over server, or ctx ends. Every
// operation may be run again safely: Lookup reads, Confirm and Release
// are idempotent, and a Claim retried after its reply was lost finds its
// own entry (claimScript).
func (x *Index) retry(ctx context.Context, fn func() error) error {
	backoff := redisconn.MinBackoff
	for {
		err := fn()
		if err == nil {
			return nil
		}
		if errors.Is(x.lost(err), ErrLost) {
			return x.lost(err)
		}
		if cerr := ctx.Err(); cerr != nil {
			if errors.Is(err, cerr) {
				return fmt.Errorf("%w (redis at %s)", err, x.addr)
			}
			return fmt.Errorf("%w (redis at %s: %v)", cerr, x.addr, err)
		}
		if !redisconn.Transient(err) {
			return err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (redis at %s: %v)", ctx.Err(), x.addr, err)
		case <-t.C:
		}
		backoff = min(2*backoff, redisconn.MaxBackoff)
	}
}

// lost turns a script's LOST error into ErrLost.
func (x *Index) lost(err error) error {
	if err != nil && strings.HasPrefix(err.Error(), "LOST ") {
		return fmt.Errorf("%w: crawl %q at %s: %s (restarted without its append-only file, flushed, or evicting keys): "+
			"nothing was written; restore the data or start the crawl again", ErrLost, x.name, x.addr, strings.TrimPrefix(err.Error(), "LOST "))
	}
	return err
}
