package redisfrontier

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/internal/redistest"
)

// sharedAddr is a redis-server that TestMain starts for the tests and the
// example that need no restarts; each test takes its own crawl name, so
// they do not see each other's keys. Tests that kill or restart a server
// start their own with redistest.Start.
var sharedAddr string

func TestMain(m *testing.M) {
	bin, why := redistest.Binary()
	if bin == "" {
		if os.Getenv("CI") != "" {
			fmt.Fprintln(os.Stderr, "redisfrontier:", why)
			os.Exit(1)
		}
		fmt.Println("skip redisfrontier tests:", why)
		os.Exit(0)
	}
	stop, err := startRedis(bin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "redisfrontier:", err)
		os.Exit(1)
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

// startRedis runs a memory-only redis-server on a free loopback port in a
// temporary directory and waits until it answers.
func startRedis(bin string) (stop func(), err error) {
	dir, err := os.MkdirTemp("", "redisfrontier-test")
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning")
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	stop = func() {
		if err := cmd.Process.Kill(); err != nil {
			fmt.Fprintln(os.Stderr, "redisfrontier: stop redis-server:", err)
		}
		if err := cmd.Wait(); err == nil {
			fmt.Fprintln(os.Stderr, "redisfrontier: redis-server exited cleanly after a kill")
		}
		if err := os.RemoveAll(dir); err != nil {
			fmt.Fprintln(os.Stderr, "redisfrontier:", err)
		}
	}
	sharedAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	rdb := redis.NewClient(&redis.Options{Addr: sharedAddr})
	defer rdb.Close()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if rdb.Ping(context.Background()).Err() == nil {
			return stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("redis-server on port %d did not answer PING within 20s", port)
		}
	}
}

var crawlSeq atomic.Int64

// newName returns a crawl name no other test uses.
func newName(t testing.TB) string {
	return fmt.Sprintf("t%d-%d", os.Getpid(), crawlSeq.Add(1))
}

// client returns a client of addr closed when t ends.
func client(t testing.TB, addr string) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() {
		if err := rdb.Close(); err != nil {
			t.Error(err)
		}
	})
	return rdb
}

// open opens a worker of crawl o.Name on rdb and makes it Leave when t
// ends.
func open(t testing.TB, rdb redis.UniversalClient, o Options) *Frontier {
	t.Helper()
	f, err := Open(context.Background(), rdb, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Leave(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return f
}

func fast(name string) Options {
	return Options{Options: frontier.Options{PerHostInFlight: 100, PerHostDelay: -1}, Name: name}
}

func u(host, path string) string { return "http://" + host + "/" + path }
