package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Cluster is a Redis Cluster of three masters without replicas, each a
// redis-server owned by a test, made by redis-cli --cluster create.
type Cluster struct {
	// Nodes are the masters, in the order redis-cli was given them (it
	// assigns slots 0-5460, 5461-10922 and 10923-16383 in that order).
	Nodes []*Server
}

// StartCluster launches three cluster-enabled redis-servers for t, each on
// free loopback ports (client and cluster bus) with its nodes.conf and
// append-only file in its own temporary directory, joins them with
// `redis-cli --cluster create ... --cluster-replicas 0 --cluster-yes`, and
// waits until every node's CLUSTER INFO says cluster_state:ok. The servers
// stop and their directories go when t ends. It skips t when redis-server
// or redis-cli is missing, unless CI is set.
func StartCluster(t testing.TB, opts ...Option) *Cluster {
	t.Helper()
	bin := need(t)
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		why := "no redis-cli on PATH: install it with `apt-get install -y redis-tools` (Debian) to run the cluster tests"
		if os.Getenv("CI") != "" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	var extra []string
	for _, o := range opts {
		o(&extra)
	}
	c := &Cluster{}
	for range 3 {
		s := &Server{t: t, bin: bin, dir: t.TempDir(), args: extra, cluster: true}
		if err := s.start(0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Kill() })
		c.Nodes = append(c.Nodes, s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redistest: redis-cli %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	for _, s := range c.Nodes {
		if err := waitClusterOK(s.Addr()); err != nil {
			t.Fatalf("redistest: cluster node %s: %v (log: %s)", s.Addr(), err, s.logTail())
		}
	}
	return c
}

// Addrs are the nodes' host:port addresses, the seeds of a cluster client.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.Nodes))
	for i, s := range c.Nodes {
		addrs[i] = s.Addr()
	}
	return addrs
}

// need returns the redis-server path, or skips or fails t as Start does.
func need(t testing.TB) string {
	t.Helper()
	bin, why := Binary()
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	return bin
}

// waitClusterOK polls CLUSTER INFO at addr until it says cluster_state:ok,
// or 30 s pass (the bound only keeps a broken cluster from hanging the
// test; joining takes a second or two).
func waitClusterOK(addr string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := Command(addr, "CLUSTER", "INFO")
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			return nil
		}
		if time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("cluster_state not ok within 30 s: %w", err)
			}
			return fmt.Errorf("cluster_state not ok within 30 s: %q", info)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Command sends one command to the server at addr on a new connection and
// returns its reply, which must be a status, an integer or a bulk string
// (an error reply is returned as an error). It speaks just enough RESP
// for the package's tests and helpers, without a client.
func Command(addr string, args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return "", err
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return "", errors.New("empty reply")
	}
	switch line[0] {
	case '+', ':':
		return line[1:], nil
	case '-':
		return "", errors.New(line[1:])
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return "", fmt.Errorf("reply %q", line)
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
	return "", fmt.Errorf("reply %q: not a status, integer or bulk string", line)
}
