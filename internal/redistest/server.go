package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Server is one redis-server process owned by a test.
type Server struct {
	t    testing.TB
	bin  string
	dir  string
	port int
	args []string

	cluster bool // a cluster node: cluster-enabled, with its bus on bus
	bus     int

	mu  sync.Mutex
	cmd *exec.Cmd
}

// Option adjusts the server's command line before it starts.
type Option func(*[]string)

// WithArgs appends redis-server options ("--maxmemory", "10mb", ...).
func WithArgs(args ...string) Option {
	return func(a *[]string) { *a = append(*a, args...) }
}

// Binary returns the redis-server path, or "" and why not.
func Binary() (string, string) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return "", "no redis-server on PATH: install it with `apt-get install -y redis-server` (Debian) to run the distributed tests"
	}
	return bin, ""
}

// Start launches a redis-server for t and stops it (and removes its
// directory) when t ends. It skips t when redis-server is missing, unless
// CI is set.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	bin := need(t)
	s := &Server{t: t, bin: bin, dir: t.TempDir()}
	var extra []string
	for _, o := range opts {
		o(&extra)
	}
	s.args = extra
	if err := s.start(0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Kill() })
	return s
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// URL is the backend URL a crawl is given: redis://127.0.0.1:PORT/db.
func (s *Server) URL(db int) string { return fmt.Sprintf("redis://%s/%d", s.Addr(), db) }

// Dir is the server's working directory (its append-only files).
func (s *Server) Dir() string { return s.dir }

// start runs redis-server on port (0: a free one) and waits until it
// answers PING.
func (s *Server) start(port int) error {
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		p := port
		if p == 0 {
			var err error
			if p, err = freePort(); err != nil {
				return err
			}
		}
		args := []string{
			"--port", strconv.Itoa(p), "--bind", "127.0.0.1",
			"--dir", s.dir, "--save", "",
			"--appendonly", "yes", "--appendfsync", "everysec",
			"--daemonize", "no", "--loglevel", "warning",
			"--logfile", filepath.Join(s.dir, "redis.log"),
		}
		if s.cluster {
			if port == 0 {
				bus, err := freePort()
				if err != nil {
					return err
				}
				s.bus = bus
			}
			// cluster-port (Redis 7.0): the default bus port, port+10000,
			// may be taken, or past 65535 for a free ephemeral port.
			args = append(args, "--cluster-enabled", "yes",
				"--cluster-config-file", filepath.Join(s.dir, "nodes.conf"),
				"--cluster-port", strconv.Itoa(s.bus))
		}
		args = append(args, s.args...)
		cmd := exec.Command(s.bin, args...)
		cmd.Dir = s.dir
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("redistest: start %s: %w", s.bin, err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		if err := waitReady(p, exited); err != nil {
			_ = cmd.Process.Kill()
			lastErr = fmt.Errorf("redistest: redis-server on port %d: %w (log: %s)", p, err, s.logTail())
			if port != 0 {
				return lastErr
			}
			continue // the free port was taken meanwhile: try another
		}
		s.mu.Lock()
		s.cmd, s.port = cmd, p
		s.mu.Unlock()
		// Reap the process whenever it exits; Kill waits for this.
		go func() { <-exited; cmd.Process.Release() }()
		return nil
	}
	return lastErr
}

// Kill stops the server with SIGKILL, as a crash would: writes of the last
// second may be lost (appendfsync everysec).
func (s *Server) Kill() {
	s.mu.Lock()
	cmd := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	waitGone(s.port)
}

// Restart kills the server and starts it again on the same port from its
// append-only file.
func (s *Server) Restart() {
	s.t.Helper()
	s.Kill()
	if err := s.start(s.port); err != nil {
		s.t.Fatal(err)
	}
}

// Running reports whether the server process is up.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}

func (s *Server) logTail() string {
	b, err := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	if err != nil {
		return "no log"
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, " | ")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("redistest: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls the port with PING until redis answers, the process
// exits, or 20 s pass (a loaded 2-core machine starts redis in well under
// a second; the bound only keeps a broken server from hanging the test).
func waitReady(port int, exited <-chan error) error {
	deadline := time.Now().Add(20 * time.Second)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("exited before answering: %v", err)
		default:
		}
		if ping(addr) == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("no answer to PING within 20 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitGone waits until nothing listens on port any more, so a restart can
// bind it again.
func waitGone(port int) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for i := 0; i < 2000; i++ {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			return
		}
		c.Close()
		time.Sleep(5 * time.Millisecond)
	}
}

// ping speaks just enough RESP to ask PING without importing a client.
func ping(addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := c.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	return nil
}
