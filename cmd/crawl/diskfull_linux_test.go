//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/simcrawl/simcrawl/internal/demosite"
)

// TestDiskFullChild is the crawl process of TestDiskFull: it runs only in
// the child, with a file size limit (RLIMIT_FSIZE) and SIGXFSZ ignored, so
// writes past the limit fail with EFBIG as they fail with ENOSPC on a full
// disk.
func TestDiskFullChild(t *testing.T) {
	limit := os.Getenv("SIMCRAWL_FSIZE")
	if limit == "" {
		t.Skip("the child process of TestDiskFull")
	}
	n, err := strconv.ParseUint(limit, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	signal.Ignore(syscall.SIGXFSZ)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}
	err = m.Run(context.Background(), strings.Fields(os.Getenv("SIMCRAWL_ARGS")))
	fmt.Printf("CRAWL-ERROR: %v\n", err)
}

// TestDiskFull: a crawl whose writes fail (a file size limit stands in for
// a full disk) stops with an error that says so, leaves a directory that
// checks clean, and a rerun with room resumes and finishes the crawl.
func TestDiskFull(t *testing.T) {
	srv := httptest.NewServer(demosite.New())
	defer srv.Close()
	dir := t.TempDir()
	seeds := writeFile(t, dir, "seeds.txt", srv.URL+"/\n")
	data := filepath.Join(dir, "data")
	args := []string{"--seeds", seeds, "--data", data, "--set", "fetch.delay=0s", "--set", "fetch.parallelism=1",
		"--set", "log.level=error", "--set", "fetch.retry_backoff=1ms"}
	// 64 KiB: room to create the store and a few pages; the demo crawl
	// needs 128 KiB.
	cmd := exec.Command(os.Args[0], "-test.run=^TestDiskFullChild$", "-test.v")
	cmd.Env = childEnv("SIMCRAWL_FSIZE=65536", "SIMCRAWL_ARGS="+strings.Join(args, " "))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	msg := string(out)
	if !strings.Contains(msg, "CRAWL-ERROR: ") || strings.Contains(msg, "CRAWL-ERROR: <nil>") {
		t.Fatalf("the crawl did not fail at the size limit:\n%s", msg)
	}
	for _, want := range []string{"full", "resume"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not say %q:\n%s", want, msg)
		}
	}
	if o, _, err := run(t, "", "check", "--data", data); err != nil {
		t.Fatalf("check after the failed writes: %v\n%s", err, o)
	}
	stored := func() string {
		o, _, err := run(t, "", "stats", "--data", data, "--json")
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	before := stored()
	if _, errOut, err := run(t, "", args...); err != nil {
		t.Fatalf("resume with room: %v\n%s", err, errOut)
	}
	if o, _, err := run(t, "", "check", "--data", data); err != nil {
		t.Fatalf("check after the resume: %v\n%s", err, o)
	}
	after := stored()
	want := fmt.Sprintf(`"stored": %d,`, len(demosite.Stored))
	if !strings.Contains(after, want) {
		t.Errorf("after the resume: want %s\n%s\n(before: %s)", want, after, before)
	}
	log, err := os.ReadFile(filepath.Join(data, "dropped.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(log), "\n"); n != len(demosite.Dropped) {
		t.Errorf("the drop log has %d lines, want %d", n, len(demosite.Dropped))
	}
}
