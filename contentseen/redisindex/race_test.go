package redisindex

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/contentseen/contentseentest"
	"github.com/simcrawl/simcrawl/internal/redistest"
)

// page is a page of a cluster: every page of a cluster is a copy of every
// other (fingerprints within 1 bit of the cluster's centre); clusters are
// far apart.
type page struct {
	cluster int
	e       contentseen.Entry
}

func clusters(r *rand.Rand, n, copies int, worker string) ([]contentseen.Fingerprint, [][]page) {
	centres := make([]contentseen.Fingerprint, n)
	for i := range centres {
		centres[i] = contentseen.Fingerprint(r.Uint64())
	}
	pages := make([][]page, copies)
	for c := range pages {
		for i, fp := range centres {
			e := contentseentest.Entry(fmt.Sprintf("%s%d/%d", worker, c, i), flip(r, fp, r.IntN(2)), r.Uint64())
			pages[c] = append(pages[c], page{i, e})
		}
		r.Shuffle(len(pages[c]), func(a, b int) { pages[c][a], pages[c][b] = pages[c][b], pages[c][a] })
	}
	return centres, pages
}

// judge runs a page through the index as the crawler does until it is
// settled: dropped as a copy (false) or stored and confirmed (true). A
// Wait is judged again a little later; a confirm that lost its lease
// (its store is then undone here) is judged again.
func judge(ctx context.Context, x contentseen.Shared, p page, clusterOf func(contentseen.Entry) int) (bool, error) {
	isCopy := func(c contentseen.Entry) bool { return clusterOf(c) == p.cluster }
	for {
		v, err := contentseen.Judge(ctx, x, p.e, isCopy)
		if err != nil {
			return false, err
		}
		switch {
		case v.Copy != nil:
			return false, nil
		case v.Wait != nil:
			if err := sleepUntil(ctx, v.Wait.Deadline); err != nil {
				return false, err
			}
			continue
		}
		err = x.Confirm(ctx, v.Seq, p.e.ID)
		if errors.Is(err, contentseen.ErrLeaseLost) {
			continue
		}
		return err == nil, err
	}
}

// sleepUntil waits on the clock for a lease to end (the server is on this
// machine, so its clock is this one), or 10ms: the claimant usually
// confirms at once, so the page is judged again soon.
func sleepUntil(ctx context.Context, d time.Time) error {
	t := time.NewTimer(min(time.Until(d)+5*time.Millisecond, 10*time.Millisecond))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Workers on separate clients race over copies of the same pages, each in
// its own order: every cluster ends with exactly one stored page, the
// index holds exactly that entry, committed, and its keys are consistent.
func TestWorkersRaceOnCopies(t *testing.T) {
	const workers, perWorker, nclusters = 4, 2, 60
	r := rand.New(rand.NewPCG(7, 8))
	centres, pages := clusters(r, nclusters, workers*perWorker, "w")
	clusterOf := func(e contentseen.Entry) int {
		for i, c := range centres {
			if contentseen.Distance(c, e.Fingerprint) <= 1 {
				return i
			}
		}
		return -1
	}
	name := newName()
	so := contentseen.SharedOptions{K: 7, Lease: 5 * time.Second}
	idx := make([]*Index, workers)
	for w := range idx {
		idx[w] = open(t, redistest.Client(t, sharedAddr), Options{Name: name, SharedOptions: so})
	}
	stored := make([]int, nclusters)
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, workers*perWorker)
	for g := range workers * perWorker {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, p := range pages[g] {
				ok, err := judge(context.Background(), idx[g%workers], p, clusterOf)
				if err != nil {
					errs <- err
					return
				}
				if ok {
					mu.Lock()
					stored[p.cluster]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for c, n := range stored {
		if n != 1 {
			t.Errorf("cluster %d: %d pages stored, want 1", c, n)
		}
		es, _, err := idx[0].Lookup(context.Background(), centres[c], [16]byte{})
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != 1 || es[0].Pending {
			t.Errorf("cluster %d: index holds %v, want one committed entry", c, seqs(es))
		}
	}
	if n, p := checkConsistent(t, idx[0]); n != nclusters || p != 0 {
		t.Errorf("index holds %d entries, %d pending, want %d, 0", n, p, nclusters)
	}
}
