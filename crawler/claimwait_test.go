package crawler

import "testing"

// A waiter of a claim is woken when the claim is settled, also when it
// asks just after; a claim settled long ago, or never, wakes nobody.
func TestClaimWaits(t *testing.T) {
	var w claimWaits
	isClosed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	a, b := w.wait(7), w.wait(7)
	if isClosed(a) || isClosed(b) {
		t.Fatal("a waiter woken before its claim was settled")
	}
	w.settled(7)
	if !isClosed(a) || !isClosed(b) {
		t.Fatal("the waiters of a settled claim not woken")
	}
	w.settled(8)
	if !isClosed(w.wait(8)) {
		t.Fatal("a waiter of a claim settled just before it asked not woken")
	}
	for s := uint64(100); s < 100+uint64(len(w.recent)); s++ {
		w.settled(s)
	}
	c := w.wait(8)
	if isClosed(c) {
		t.Fatal("a waiter of a claim settled long ago woken at once")
	}
	w.forget(8, c)
	if len(w.ch) != 0 {
		t.Fatalf("%d channels kept after forget", len(w.ch))
	}
	w.settled(0)
	if isClosed(w.wait(0)) {
		t.Fatal("seq 0 (no claim) counted as settled")
	}
}
