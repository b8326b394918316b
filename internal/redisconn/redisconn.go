// Package redisconn holds what the packages that keep a crawl in Redis
// (frontier/redisfrontier, contentseen/redisindex) need to know about the
// server they talk to: its address for messages, every node of a Redis
// Cluster, and whether it is recent enough. It knows nothing of their keys.
package redisconn

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// Addr names the server rdb talks to, for messages: host:port, or the
// seed addresses of a cluster.
func Addr(rdb redis.UniversalClient) string {
	switch c := rdb.(type) {
	case *redis.Client:
		return c.Options().Addr
	case *redis.ClusterClient:
		return fmt.Sprint(c.Options().Addrs)
	}
	return fmt.Sprintf("%T", rdb)
}

// EachServer runs fn on the server rdb talks to, or on every node of a
// Redis Cluster, masters and replicas, in parallel, and returns the first
// node's error (which fn should make name the node's address). Commands
// without a key do not reach every node through a ClusterClient: go-redis
// sends INFO to every master but returns one reply, and a SCRIPT LOAD in a
// pipeline goes to one node.
func EachServer(ctx context.Context, rdb redis.UniversalClient, fn func(ctx context.Context, c redis.Cmdable, addr string) error) error {
	c, ok := rdb.(*redis.ClusterClient)
	if !ok {
		return fn(ctx, rdb, Addr(rdb))
	}
	var mu sync.Mutex
	var nodeErr error // the first node's error, which names the node
	err := c.ForEachShard(ctx, func(ctx context.Context, node *redis.Client) error {
		err := fn(ctx, node, node.Options().Addr)
		if err != nil {
			mu.Lock()
			nodeErr = cmp.Or(nodeErr, err)
			mu.Unlock()
		}
		return err
	})
	if nodeErr != nil {
		return nodeErr
	}
	if err != nil { // the cluster's slots could not be read
		return fmt.Errorf("connect to redis cluster at %s: %w", Addr(rdb), err)
	}
	return nil
}

// CheckServers asks every server rdb talks to (each node of a cluster)
// for its version and refuses one older than Redis 7.0 with an error
// wrapping incompatible. An unreachable server's error names its address.
func CheckServers(ctx context.Context, rdb redis.UniversalClient, incompatible error) error {
	return EachServer(ctx, rdb, func(ctx context.Context, c redis.Cmdable, addr string) error {
		info, err := c.Info(ctx, "server").Result()
		if err != nil {
			return fmt.Errorf("connect to redis at %s: %w", addr, err)
		}
		if err := checkVersion(info, incompatible); err != nil {
			return fmt.Errorf("redis at %s: %w", addr, err)
		}
		return nil
	})
}

// checkVersion refuses a server older than 7.0, given its INFO server
// text: the scripts use Redis 7 semantics (effects replication, so TIME
// may precede writes; ZADD GT).
func checkVersion(info string, incompatible error) error {
	v, ok := InfoField(info, "redis_version")
	if !ok {
		return fmt.Errorf("%w: INFO server has no redis_version", incompatible)
	}
	major, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	if err != nil {
		return fmt.Errorf("%w: unreadable redis_version %q", incompatible, v)
	}
	if n < 7 {
		return fmt.Errorf("%w: redis %s, need 7.0 or later", incompatible, v)
	}
	return nil
}

// InfoField returns the value of field name in the text of an INFO reply
// ("name:value" lines), and whether it is there.
func InfoField(info, name string) (string, bool) {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v, true
		}
	}
	return "", false
}

// UsedMemory returns the server's used_memory (INFO memory): the bytes its
// allocator holds, data and overhead, which the memory-per-entry figures of
// the benchmarks divide.
func UsedMemory(ctx context.Context, c redis.Cmdable) (int64, error) {
	info, err := c.Info(ctx, "memory").Result()
	if err != nil {
		return 0, fmt.Errorf("redis INFO memory: %w", err)
	}
	v, ok := InfoField(info, "used_memory")
	if !ok {
		return 0, fmt.Errorf("redis INFO memory has no used_memory")
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("redis INFO memory: used_memory %q: %w", v, err)
	}
	return n, nil
}

// Backoff of a call retried while Redis is unreachable or restarting:
// from MinBackoff, doubling, up to MaxBackoff.
const (
	MinBackoff = 50 * time.Millisecond
	MaxBackoff = 2 * time.Second
)

// Transient reports whether err means the server is unreachable, starting
// or failing over, so that the same call may succeed later.
func Transient(err error) bool {
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

// RoundTrips is a go-redis hook that counts a client's round trips: each
// command, and each pipeline, sent is one. Add it with Client.AddHook; it
// is safe for concurrent use.
type RoundTrips struct{ n atomic.Int64 }

// N returns the round trips counted so far.
func (r *RoundTrips) N() int64 { return r.n.Load() }

// DialHook implements redis.Hook.
func (r *RoundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook implements redis.Hook.
func (r *RoundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook implements redis.Hook.
func (r *RoundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmds)
	}
}
