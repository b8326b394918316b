package redistest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// Main runs a package's tests (call it from TestMain) against one
// memory-only redis-server on a free loopback port, shared by every test
// that needs no restarts: it sets *addr to the server's address before
// m.Run and stops the server after. Tests share it by each taking a crawl
// name of its own. Without redis-server it exits 0 saying why, or 1 under
// CI. It does not return.
func Main(m *testing.M, pkg string, addr *string) {
	bin, why := Binary()
	if bin == "" {
		if os.Getenv("CI") != "" {
			fmt.Fprintln(os.Stderr, pkg+":", why)
			os.Exit(1)
		}
		fmt.Println("skip", pkg, "tests:", why)
		os.Exit(0)
	}
	stop, a, err := startShared(bin, pkg)
	if err != nil {
		fmt.Fprintln(os.Stderr, pkg+":", err)
		os.Exit(1)
	}
	*addr = a
	WaitingParallel(6) // the cluster tests wait on their cluster's start
	code := m.Run()
	stop()
	os.Exit(code)
}

// startShared runs a memory-only redis-server in a temporary directory and
// waits until it answers.
func startShared(bin, pkg string) (stop func(), addr string, err error) {
	dir, err := os.MkdirTemp("", pkg+"-test")
	if err != nil {
		return nil, "", err
	}
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning")
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("start %s: %w", bin, err)
	}
	// waitReady takes the exit status if the server dies starting; else
	// stop takes it after the kill.
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	removeDir := func() {
		if err := os.RemoveAll(dir); err != nil {
			fmt.Fprintln(os.Stderr, pkg+":", err)
		}
	}
	if err := waitReady(port, exited); err != nil {
		if kerr := cmd.Process.Kill(); kerr != nil && !errors.Is(kerr, os.ErrProcessDone) {
			fmt.Fprintln(os.Stderr, pkg+": stop redis-server:", kerr)
		}
		removeDir()
		return nil, "", fmt.Errorf("redis-server on port %d: %w", port, err)
	}
	stop = func() {
		if err := cmd.Process.Kill(); err != nil {
			fmt.Fprintln(os.Stderr, pkg+": stop redis-server:", err)
		}
		if err := <-exited; err == nil {
			fmt.Fprintln(os.Stderr, pkg+": redis-server exited cleanly after a kill")
		}
		removeDir()
	}
	return stop, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), nil
}
