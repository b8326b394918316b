package redistest_test

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/simcrawl/simcrawl/internal/redistest"
)

// do sends one inline command and returns the first reply line.
func do(t *testing.T, addr, cmd string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(cmd + "\r\n")); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(line, "$") && !strings.HasPrefix(line, "$-1") {
		if line, err = r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	return strings.TrimSpace(line)
}

// A write acknowledged more than a second before a crash survives the
// restart (appendfsync everysec; a shutdown-free kill).
func TestRestartKeepsAppendOnlyData(t *testing.T) {
	s := redistest.Start(t)
	if got := do(t, s.Addr(), "SET k v1"); got != "+OK" {
		t.Fatalf("SET: %q", got)
	}
	// Ask the server to rewrite (and fsync) the AOF now rather than sleep
	// past the everysec tick, and poll INFO until the rewrite is done.
	if got := do(t, s.Addr(), "BGREWRITEAOF"); !strings.HasPrefix(got, "+") {
		t.Fatalf("BGREWRITEAOF: %q", got)
	}
	for in := info(t, s.Addr()); strings.Contains(in, "aof_rewrite_in_progress:1") || strings.Contains(in, "aof_rewrite_scheduled:1"); in = info(t, s.Addr()) {
		time.Sleep(10 * time.Millisecond)
	}
	s.Restart()
	if got := do(t, s.Addr(), "GET k"); got != "v1" {
		t.Fatalf("after restart GET k = %q, want v1", got)
	}
	s.Kill()
	if s.Running() {
		t.Fatal("still running after Kill")
	}
}

func info(t *testing.T, addr string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("INFO persistence\r\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8192)
	n, _ := c.Read(buf)
	return string(buf[:n])
}
