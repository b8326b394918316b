package redisindex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// Backoff of calls while Redis is unreachable or restarting.
const (
	minBackoff = 50 * time.Millisecond
	maxBackoff = 2 * time.Second
)

// retry runs fn until it succeeds, fails for a reason other than an
// unreachable, loading or failing-over server, or ctx ends. Every
// operation may be run again safely: Lookup reads, Confirm and Release
// are idempotent, and a Claim retried after its reply was lost finds its
// own entry (claimScript).
func (x *Index) retry(ctx context.Context, fn func() error) error {
	backoff := minBackoff
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
		if !transient(err) {
			return err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (redis at %s: %v)", ctx.Err(), x.addr, err)
		case <-t.C:
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// transient reports whether err means the server is unreachable, starting
// or failing over, so that the same call may succeed later.
func transient(err error) bool {
	if errors.Is(err, redis.ErrClosed) {
		return false // the owner closed the client
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, redis.ErrPoolTimeout) {
		return true
	}
	s := err.Error()
	for _, p := range []string{"LOADING ", "MASTERDOWN ", "TRYAGAIN ", "CLUSTERDOWN ", "READONLY "} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// lost turns a script's LOST error into ErrLost.
func (x *Index) lost(err error) error {
	if err != nil && strings.HasPrefix(err.Error(), "LOST ") {
		return fmt.Errorf("%w: crawl %q at %s: %s (restarted without its append-only file, flushed, or evicting keys): "+
			"nothing was written; restore the data or start the crawl again", ErrLost, x.name, x.addr, strings.TrimPrefix(err.Error(), "LOST "))
	}
	return err
}
