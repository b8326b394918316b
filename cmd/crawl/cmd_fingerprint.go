package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/extract"
)

func (m *Main) runFingerprint(ctx context.Context, args []string) error {
	fset := m.newFlagSet("fingerprint")
	spec := fset.String("features", "words", "features: words, word-shingles:N, char-shingles:N")
	files, err := parseInterspersed(fset, args)
	if err != nil {
		return err
	}
	fper, err := newFingerprinter(*spec)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	var errs []error
	for _, name := range files {
		text, err := m.readText(name)
		if err != nil {
			errs = append(errs, fmt.Errorf("fingerprint: %w", err))
			continue
		}
		fp, n, err := fper.Fingerprint(text)
		switch {
		case errors.Is(err, contentseen.ErrNotEnoughContent):
			fmt.Fprintf(m.Stdout, "%-16s  %5d  %s  (not enough content)\n", "-", n, name)
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		default:
			fmt.Fprintf(m.Stdout, "%s  %5d  %s\n", fp, n, name)
		}
	}
	return errors.Join(errs...)
}

func (m *Main) runDistance(ctx context.Context, args []string) error {
	fset := m.newFlagSet("distance")
	spec := fset.String("features", "words", "features: words, word-shingles:N, char-shingles:N")
	files, err := parseInterspersed(fset, args)
	if err != nil {
		return err
	}
	if len(files) != 2 {
		return usageErrorf(fset, "distance: want two files, got %d", len(files))
	}
	fper, err := newFingerprinter(*spec)
	if err != nil {
		return err
	}
	var fps [2]contentseen.Fingerprint
	for i, name := range files {
		text, err := m.readText(name)
		if err != nil {
			return fmt.Errorf("distance: %w", err)
		}
		fp, _, err := fper.Fingerprint(text)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		fps[i] = fp
	}
	d := contentseen.Distance(fps[0], fps[1])
	fmt.Fprintf(m.Stdout, "distance %d  similarity %.3f  (%s %s)\n", d, contentseen.Similarity(fps[0], fps[1]), fps[0], fps[1])
	return nil
}

func newFingerprinter(spec string) (*contentseen.Fingerprinter, error) {
	o, err := contentseen.ParseOptions(spec)
	if err != nil {
		return nil, fmt.Errorf("--features: %w", err)
	}
	return contentseen.NewFingerprinter(o)
}

// readText returns the text the crawler would fingerprint for a file: the
// extracted article text of an HTML file, the file itself otherwise. "-"
// is standard input.
func (m *Main) readText(name string) (string, error) {
	var b []byte
	var err error
	if name == "-" {
		b, err = io.ReadAll(m.Stdin)
	} else {
		b, err = os.ReadFile(name)
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	if !looksLikeHTML(name, b) {
		// Binary bytes are refused as `crawl extract` refuses them: read
		// as text they give a fingerprint, and a distance, of noise.
		if _, err := extract.ExtractBytes(b, "text/plain", fileURL(name), extract.Options{}); errors.Is(err, extract.ErrNotHTML) {
			return "", fmt.Errorf("%s: not text: %w", name, err)
		}
		return string(b), nil
	}
	doc, err := extract.ExtractBytes(b, "text/html", fileURL(name), extract.Options{})
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	// What the crawler judges: the text without the page's own headline.
	return contentseen.StripTitle(doc.Text, doc.Title), nil
}

func looksLikeHTML(name string, b []byte) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".html", ".htm", ".xhtml":
		return true
	case ".txt", ".text", ".md":
		return false
	}
	head := bytes.ToLower(bytes.TrimSpace(b[:min(len(b), 512)]))
	return bytes.HasPrefix(head, []byte("<!doctype html")) || bytes.HasPrefix(head, []byte("<html"))
}

func fileURL(name string) *url.URL {
	abs, err := filepath.Abs(name)
	if err != nil {
		abs = name
	}
	return &url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
}
