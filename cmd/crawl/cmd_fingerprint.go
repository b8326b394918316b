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
	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/extract"
)

func (m *Main) runFingerprint(ctx context.Context, args []string) error {
	fset := m.newFlagSet("fingerprint")
	spec := fset.String("features", "words", "features: words, word-shingles:N, char-shingles:N")
	files, err := parseInterspersed(fset, args)
	if err != nil {
		return err
	}
	if _, err := contentseen.ParseOptions(*spec); err != nil {
		return usageErrorf(fset, "fingerprint: --features: %v", err)
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
	if _, err := contentseen.ParseOptions(*spec); err != nil {
		return usageErrorf(fset, "distance: --features: %v", err)
	}
	fper, err := newFingerprinter(*spec)
	if err != nil {
		return err
	}
	var texts [2]string
	for i, name := range files {
		if texts[i], err = m.readText(name); err != nil {
			return fmt.Errorf("distance: %w", err)
		}
	}
	// The crawl's own rule at the default settings (config.yaml's
	// contentseen keys), so "copies" here means what a crawl would drop.
	cs := defaultConfig().ContentSeen
	th := contentseen.Thresholds{Similarity: cs.Similarity, Containment: cs.Containment, SizeRatio: cs.SizeRatio}
	v, err := crawler.JudgePair(fper, th, cs.K, cs.ShortK, cs.ShortFeatures, texts[0], texts[1])
	if err != nil {
		return fmt.Errorf("distance: %s, %s: %w", files[0], files[1], err)
	}
	r := v.Resemblance
	fmt.Fprintf(m.Stdout, "distance %d  similarity %.3f  containment %.3f  size ratio %.3f  bits agreeing %.3f  (%s %s)\n",
		v.Distance, r.Similarity, r.Containment, r.SizeRatio, contentseen.Similarity(v.A, v.B), v.A, v.B)
	radius := fmt.Sprintf("k = %d", v.Radius)
	if v.Short {
		radius = fmt.Sprintf("short_k = %d, a text of fewer than %d features", v.Radius, cs.ShortFeatures)
	}
	rule := fmt.Sprintf("similarity >= %.2f, or containment >= %.2f with size ratio >= %.2f", th.Similarity, th.Containment, th.SizeRatio)
	switch {
	case v.Exact:
		fmt.Fprintf(m.Stdout, "copies (exact): the same text, letter for letter; a crawl drops the one it meets second\n")
	case v.Reason != "":
		fmt.Fprintf(m.Stdout, "copies (near): %d bits apart, within %s, and the sketches agree (%s); a crawl drops the one it meets second\n", v.Distance, radius, rule)
	case v.Distance > v.Radius:
		fmt.Fprintf(m.Stdout, "not copies: %d bits apart, beyond %s, so never compared; a crawl stores both\n", v.Distance, radius)
	default:
		fmt.Fprintf(m.Stdout, "not copies: %d bits apart, within %s, but the sketches disagree (want %s); a crawl stores both\n", v.Distance, radius, rule)
	}
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
