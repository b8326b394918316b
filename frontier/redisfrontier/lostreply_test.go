package redisfrontier

import (
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/internal/redistest"
)

// cutProxy forwards TCP between clients and a redis-server. When armed, it
// swallows the server's next reply and cuts that connection: the server ran
// the command and the client never hears of it, as when a network fails or
// a server dies right after a write. The client then sees io.EOF and sends
// the command again (go-redis's own retries, then Frontier.retry).
type cutProxy struct {
	ln     net.Listener
	target string
	armed  atomic.Bool
	cuts   atomic.Int64

	mu    sync.Mutex // guards conns
	conns []net.Conn
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				p.serve(c)
			}()
		}
	}()
	t.Cleanup(func() {
		if err := ln.Close(); err != nil {
			t.Error(err)
		}
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close() // may be closed already; the error says nothing
		}
		p.mu.Unlock()
		wg.Wait()
	})
	return p
}

func (p *cutProxy) Addr() string { return p.ln.Addr().String() }

// arm makes the proxy swallow the next reply that any connection carries.
func (p *cutProxy) arm() { p.armed.Store(true) }

func (p *cutProxy) serve(client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	p.mu.Lock()
	p.conns = append(p.conns, client, server)
	p.mu.Unlock()
	go func() {
		io.Copy(server, client) // ends when either side is closed
		server.Close()
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := server.Read(buf)
		if n > 0 && p.armed.CompareAndSwap(true, false) {
			p.cuts.Add(1)
			break
		}
		if n > 0 {
			if _, werr := client.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	client.Close()
	server.Close()
}

// cutOnce arms p, runs fn and checks that exactly one reply was cut.
func cutOnce(t *testing.T, p *cutProxy, fn func()) {
	t.Helper()
	before := p.cuts.Load()
	p.arm()
	fn()
	if got := p.cuts.Load() - before; got != 1 {
		t.Fatalf("%d replies cut, want 1: the test did not lose a reply", got)
	}
}

// A redirect target recorded by an Alias whose reply was lost is new to
// the crawl: the call's second run must not answer seen, or the crawler
// treats the page as an alias of a URL known elsewhere and never stores
// it, while the target is marked done and never fetched.
func TestAliasLostReply(t *testing.T) {
	p := newCutProxy(t, sharedAddr)
	f := open(t, redistest.Client(t, p.Addr()), fast(newName(t)))
	ctx := context.Background()
	target := u("a.example", "final")
	var seen bool
	var err error
	cutOnce(t, p, func() { seen, err = f.Alias(ctx, target, "alias-of:"+u("a.example", "old")) })
	if err != nil {
		t.Fatal(err)
	}
	if seen {
		t.Errorf("Alias of a new URL whose reply was lost = seen; want not seen (the page would never be stored)")
	}
	// A later Alias of the same URL is a repeat: seen.
	if seen, err := f.Alias(ctx, target, "alias-of:"+u("a.example", "other")); err != nil || !seen {
		t.Errorf("second Alias = %v, %v; want seen", seen, err)
	}
	if s, err := f.Counts(ctx); err != nil || s.Done != 1 {
		t.Errorf("Counts = %+v, %v; want 1 done", s, err)
	}
}

// Add whose reply was lost reports the URLs it queued, not 0.
func TestAddLostReply(t *testing.T) {
	p := newCutProxy(t, sharedAddr)
	f := open(t, redistest.Client(t, p.Addr()), fast(newName(t)))
	ctx := context.Background()
	var n int
	var err error
	cutOnce(t, p, func() {
		n, err = f.Add(ctx, frontier.Item{URL: u("a.example", "1"), Seed: true}, frontier.Item{URL: u("a.example", "2"), Seed: true})
	})
	if err != nil || n != 2 {
		t.Errorf("Add with a lost reply = %d, %v; want 2 queued", n, err)
	}
	if s, err := f.Counts(ctx); err != nil || s.Pending != 2 {
		t.Errorf("Counts = %+v, %v; want 2 pending", s, err)
	}
}

// The page budget holds when the replies of ClaimPage and ReturnPage are
// lost: a claim run twice takes one page, a return run twice gives one
// back (else max_pages is exceeded by one page per lost return).
func TestBudgetLostReply(t *testing.T) {
	p := newCutProxy(t, sharedAddr)
	f := open(t, redistest.Client(t, p.Addr()), fast(newName(t)))
	ctx := context.Background()
	for range 2 {
		if ok, err := f.ClaimPage(ctx, 10); err != nil || !ok {
			t.Fatalf("ClaimPage = %v, %v", ok, err)
		}
	}
	cutOnce(t, p, func() {
		if err := f.ReturnPage(ctx); err != nil {
			t.Fatal(err)
		}
	})
	if n, err := f.Claimed(ctx); err != nil || n != 1 {
		t.Errorf("Claimed after a return whose reply was lost = %d, %v; want 1", n, err)
	}
	var ok bool
	var err error
	cutOnce(t, p, func() { ok, err = f.ClaimPage(ctx, 10) })
	if err != nil || !ok {
		t.Fatalf("ClaimPage with a lost reply = %v, %v; want a claim", ok, err)
	}
	if n, err := f.Claimed(ctx); err != nil || n != 2 {
		t.Errorf("Claimed after a claim whose reply was lost = %d, %v; want 2", n, err)
	}
}

// A Next whose reply was lost and that is sent again hands out the URL its
// first run leased, not a second one: else the first stays leased to a
// worker that does not know it, holding a slot of its host and counting in
// flight until the renewal returns it a LeaseTTL later.
func TestNextLostReply(t *testing.T) {
	p := newCutProxy(t, sharedAddr)
	f := open(t, redistest.Client(t, p.Addr()), fast(newName(t)))
	ctx := context.Background()
	first, second := u("a.example", "1"), u("a.example", "2")
	if _, err := f.Add(ctx, frontier.Item{URL: first, Seed: true}, frontier.Item{URL: second, Seed: true}); err != nil {
		t.Fatal(err)
	}
	var it frontier.Item
	var err error
	cutOnce(t, p, func() { it, err = f.Next(ctx) })
	if err != nil {
		t.Fatal(err)
	}
	if it.URL != first {
		t.Errorf("Next with a lost reply = %s, want %s (the URL its first run leased)", it.URL, first)
	}
	s, err := f.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.InFlight != 1 || s.Pending != 1 {
		t.Errorf("Counts after one Next = %+v, want 1 in flight, 1 pending", s)
	}
}
