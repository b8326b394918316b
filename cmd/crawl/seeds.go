package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"unicode"
)

// readSeeds reads a seeds file: one absolute http(s) URL per line; blank
// lines and lines starting with # are ignored, as is anything after " #".
// A bad line is an error naming the file and line, so nothing is fetched
// from a half-understood list.
func readSeeds(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("seeds: %w", err)
	}
	defer f.Close()
	return parseSeeds(path, f)
}

func parseSeeds(name string, r io.Reader) ([]string, error) {
	var seeds []string
	var errs []error
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if n == 1 {
			// A byte order mark, as some Windows editors begin a file.
			text = strings.TrimPrefix(text, "\ufeff")
		}
		line := strings.TrimSpace(text)
		if i := strings.Index(line, " #"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := checkSeed(line); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %w", name, n, err))
			continue
		}
		seeds = append(seeds, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(seeds) == 0 {
		return nil, fmt.Errorf("%s: no seed URLs", name)
	}
	return seeds, nil
}

func checkSeed(s string) error {
	// url.Parse takes a space as part of the path ("URL label" became
	// URL%20label, fetched and failed): one URL per line, nothing else.
	if strings.ContainsFunc(s, unicode.IsSpace) {
		return fmt.Errorf("bad URL %q: it contains a space; write one URL per line (a comment after it starts with \" #\")", s)
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("bad URL %q: %v", s, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("bad URL %q: want an absolute http:// or https:// URL", s)
	}
	if u.Host == "" {
		return fmt.Errorf("bad URL %q: no host", s)
	}
	return nil
}
