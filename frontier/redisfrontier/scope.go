package redisfrontier

import (
	"context"
	"fmt"
	"strings"
)

// The crawl's shared scope record, the hash P scope (P the frontier's
// prefix): field from_seeds ("1") when the crawl's scope is its seeds'
// hosts, so that a seed answering from another host of its site widens
// it; and one field "host:H" -> the seed for each host a seed answered
// from. Every worker adds those hosts to its own scope (crawler.SharedScope).

const (
	scopeFromSeeds = "from_seeds"
	scopeHostField = "host:"
)

func (f *Frontier) scopeKey() string { return f.prefix + "scope" }

// MarkScopeFromSeeds records that the crawl's scope is its seeds' hosts.
func (f *Frontier) MarkScopeFromSeeds(ctx context.Context) error {
	err := f.retry(ctx, func() error { return f.rdb.HSet(ctx, f.scopeKey(), scopeFromSeeds, "1").Err() })
	if err != nil {
		return fmt.Errorf("redisfrontier: record the scope: %w", err)
	}
	return nil
}

// AddScopeHost records host, which seed answered from, in the crawl's
// scope (a host recorded already keeps its first seed).
func (f *Frontier) AddScopeHost(ctx context.Context, host, seed string) error {
	err := f.retry(ctx, func() error { return f.rdb.HSetNX(ctx, f.scopeKey(), scopeHostField+host, seed).Err() })
	if err != nil {
		return fmt.Errorf("redisfrontier: record scope host %s: %w", host, err)
	}
	return nil
}

// SharedScope returns whether the crawl's scope is its seeds' hosts and
// the hosts its seeds answered from (one round trip).
func (f *Frontier) SharedScope(ctx context.Context) (fromSeeds bool, hosts []string, err error) {
	var m map[string]string
	err = f.retry(ctx, func() error {
		var err error
		m, err = f.rdb.HGetAll(ctx, f.scopeKey()).Result()
		return err
	})
	if err != nil {
		return false, nil, fmt.Errorf("redisfrontier: read the scope: %w", err)
	}
	for k := range m {
		if h, ok := strings.CutPrefix(k, scopeHostField); ok {
			hosts = append(hosts, h)
		}
	}
	return m[scopeFromSeeds] == "1", hosts, nil
}
