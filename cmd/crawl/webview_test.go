package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/simcrawl/simcrawl/internal/demosite"
)

// TestCrawlUI runs `crawl --ui` on a site whose last page answers only
// when the test says so, and reads the view while the crawl waits on it:
// the live badge, this run's counters, and the pages already stored, read
// through the crawl's own open database. When the crawl ends the view
// stops with it.
func TestCrawlUI(t *testing.T) {
	release, reached := make(chan struct{}), make(chan struct{})
	var once sync.Once
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<html><head><title>Home</title></head><body><a href="/a">a</a> <a href="/slow">slow</a></body></html>`)
	})
	mux.HandleFunc("/a", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<html><head><title>A</title></head><body><article><p>"+strings.Join(demosite.Words(3, 150), " ")+"</p></article></body></html>")
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(reached) })
		select {
		case <-release:
		case <-r.Context().Done():
		}
		io.WriteString(w, "<html><head><title>Slow</title></head><body><p>"+strings.Join(demosite.Words(4, 150), " ")+"</p></body></html>")
	})
	site := httptest.NewServer(mux)
	defer site.Close()
	dir := t.TempDir()
	seeds := writeFile(t, dir, "seeds.txt", site.URL+"/\n")

	pr, pw := io.Pipe()
	m := &Main{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: pw}
	done := make(chan error, 1)
	go func() {
		err := m.Run(context.Background(), []string{"--seeds", seeds, "--data", dir + "/data", "--ui", "127.0.0.1:0",
			"--set", "fetch.delay=0s", "--set", "fetch.parallelism=1", "--set", "log.level=warn"})
		pw.Close()
		done <- err
	}()
	var base string
	var stderr strings.Builder
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		stderr.WriteString(sc.Text() + "\n")
		if rest, ok := strings.CutPrefix(sc.Text(), "Web view of this crawl at "); ok {
			base = strings.TrimSuffix(rest, "/")
			break
		}
	}
	if base == "" {
		t.Fatalf("crawl --ui printed no address; stderr:\n%s", stderr.String())
	}
	go io.Copy(io.Discard, pr) // the rest of stderr
	if strings.Contains(stderr.String(), "warning") {
		t.Errorf("a loopback address drew a warning:\n%s", stderr.String())
	}

	<-reached // "/" and "/a" are decided: one page in flight at a time
	body := httpGet(t, base+"/")
	for _, want := range []string{`class="live"`, `<span class="big" id="stored">2</span>`, "fetched this run"} {
		if !strings.Contains(body, want) {
			t.Errorf("live overview lacks %q:\n%s", want, body)
		}
	}
	if body := httpGet(t, base+"/dups"); !strings.Contains(body, `<span id="cluster-count">0</span>`) {
		t.Errorf("live duplicates page: no cluster count of 0")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("crawl --ui: %v", err)
	}
	if resp, err := http.Get(base + "/"); err == nil {
		resp.Body.Close()
		t.Errorf("the view still answers after the crawl ended")
	}
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %s:\n%s", url, resp.Status, b)
	}
	return string(b)
}

// A busy --ui address fails before the data directory is created, so a
// mistake leaves nothing behind.
func TestCrawlUIBusyAddressWritesNothing(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dir := t.TempDir()
	seeds := writeFile(t, dir, "seeds.txt", "http://127.0.0.1:1/\n")
	data := filepath.Join(dir, "data")
	_, _, err = run(t, "", "--seeds", seeds, "--data", data, "--ui", busy.Addr().String())
	if err == nil || !strings.Contains(err.Error(), "--ui") {
		t.Fatalf("crawl --ui on a busy address: err = %v, want a --ui error", err)
	}
	if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the data directory was created (stat: %v)", err)
	}
}
