package crawler

import "sync"

// claimWaits wakes the pages that wait for a pending claim of this worker
// (a copy fetched while the page it copies was being stored by another
// goroutine of the same process) as soon as the claim is confirmed or
// released, instead of letting them poll the shared index: one round
// trip for the wait instead of one per poll.
type claimWaits struct {
	mu sync.Mutex
	ch map[uint64]chan struct{} // claim seq -> closed when settled
	// recent are the last claims settled with nobody waiting, for a page
	// that read the claim pending just before it was settled.
	recent [256]uint64
	next   int
}

// closedChan is a channel that is closed.
var closedChan = func() chan struct{} { ch := make(chan struct{}); close(ch); return ch }()

// wait returns a channel closed when claim seq is settled.
func (w *claimWaits) wait(seq uint64) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.recent {
		if s == seq {
			return closedChan
		}
	}
	if w.ch == nil {
		w.ch = map[uint64]chan struct{}{}
	}
	ch, ok := w.ch[seq]
	if !ok {
		ch = make(chan struct{})
		w.ch[seq] = ch
	}
	return ch
}

// settled wakes the waiters of claim seq (0: none).
func (w *claimWaits) settled(seq uint64) {
	if seq == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if ch, ok := w.ch[seq]; ok {
		close(ch)
		delete(w.ch, seq)
		return
	}
	w.recent[w.next] = seq
	w.next = (w.next + 1) % len(w.recent)
}

// forget drops a waiter's channel ch of claim seq that timed out (a claim
// of an earlier run, settled by none of this run's pages).
func (w *claimWaits) forget(seq uint64, ch <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if cur, ok := w.ch[seq]; ok && (<-chan struct{})(cur) == ch {
		delete(w.ch, seq)
	}
}
