package crawler

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/net/publicsuffix"
)

// seedHostsKey, in crawlBucket, is a sub-bucket of the hosts a seed
// redirected to: host -> the seed. They join the crawl's scope when it is
// the seeds' hosts (no allow_domains), on this run and every resumed one.
var seedHostsKey = []byte("seed-redirect-hosts")

// liveScope is the crawl's scope as it grows: a seed answering from
// another host (http://www.example.org/ from example.org) brings that
// host in, as if it had been a seed. Safe for concurrent use.
type liveScope struct {
	mu    sync.RWMutex
	scope Scope
	grows bool // AllowDomains are the seeds' hosts: a seed's redirect extends them
}

func (s *liveScope) get() Scope {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.scope
}

func (s *liveScope) growing() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.grows
}

// grow makes the scope one a seed's redirect extends: a worker joining a
// shared crawl whose scope is its seeds' hosts (SharedScope).
func (s *liveScope) grow() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.grows = true
}

// add allows host (canonical) and reports whether it was new.
func (s *liveScope) add(host string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.scope.AllowDomains {
		if domainMatch(host, d) {
			return false
		}
	}
	// A new slice: readers hold the old one.
	s.scope.AllowDomains = append(slices.Clip(s.scope.AllowDomains), host)
	return true
}

// loadSeedHosts adds the hosts earlier runs recorded to a growing scope.
func (c *Crawler) loadSeedHosts() error {
	if !c.scope.growing() {
		return nil
	}
	return c.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(crawlBucket)
		if b == nil || b.Bucket(seedHostsKey) == nil {
			return nil
		}
		return b.Bucket(seedHostsKey).ForEach(func(k, _ []byte) error {
			c.scope.add(string(k))
			return nil
		})
	})
}

// seedAnswered brings the host a seed answered from into a growing scope,
// and records it for resumed runs: only a host of the seed's own site (the
// same registrable domain, as www.example.org and example.org), not a
// login service, a consent wall or a link shortener's target. In a shared
// crawl the host is recorded in the shared frontier too, for the other
// workers (SharedScope).
func (c *Crawler) seedAnswered(ctx context.Context, seed, finalURL string) error {
	u, err := url.Parse(finalURL)
	s, serr := url.Parse(seed)
	if err != nil || serr != nil || !c.scope.growing() || u.Hostname() == "" {
		return nil
	}
	host := canonicalDomains([]string{u.Hostname()})
	if len(host) == 0 || !sameSite(host[0], s.Hostname()) || !c.scope.add(host[0]) {
		return nil
	}
	c.opts.Logger.Info("scope: a seed answered from another host, now crawled too", "seed", seed, "host", host[0])
	err = c.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(crawlBucket)
		if err != nil {
			return err
		}
		hosts, err := b.CreateBucketIfNotExists(seedHostsKey)
		if err != nil {
			return err
		}
		return hosts.Put([]byte(host[0]), []byte(seed))
	})
	if err != nil {
		return fmt.Errorf("crawler: record the host of seed %s: %w", seed, err)
	}
	if c.dist == nil {
		return nil
	}
	if ss, ok := c.dist.Queue.(SharedScope); ok {
		if err := ss.AddScopeHost(ctx, host[0], seed); err != nil {
			return fmt.Errorf("crawler: share the host of seed %s: %w", seed, err)
		}
	}
	return nil
}

// sameSite reports whether hosts a and b share a registrable domain (the
// public suffix and one label more). IP addresses and single labels
// (localhost) have none.
func sameSite(a, b string) bool {
	hs := canonicalDomains([]string{a, b})
	if len(hs) != 2 || net.ParseIP(hs[0]) != nil || !strings.Contains(hs[0], ".") {
		return false
	}
	ra, err := publicsuffix.EffectiveTLDPlusOne(hs[0])
	if err != nil {
		return false
	}
	rb, err := publicsuffix.EffectiveTLDPlusOne(hs[1])
	return err == nil && ra == rb
}
