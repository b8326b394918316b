package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/extract"
)

// extractOutput is one input of `crawl extract --json`. Its field names
// are a contract for scripts.
type extractOutput struct {
	Input        string `json:"input"`
	URL          string `json:"url"`
	CanonicalURL string `json:"canonical_url,omitempty"`
	Title        string `json:"title"`
	Lang         string `json:"lang"`
	Charset      string `json:"charset"`
	NoIndex      bool   `json:"noindex"`
	NoFollow     bool   `json:"nofollow"`
	Fallback     bool   `json:"fallback"`
	Truncated    bool   `json:"truncated"`
	Links        int    `json:"links"`
	Text         string `json:"text"`
	Error        string `json:"error,omitempty"`
}

func (m *Main) runExtract(ctx context.Context, args []string) error {
	fset := m.newFlagSet("extract")
	asJSON := fset.Bool("json", false, "print one JSON object per input")
	baseFlag := fset.String("base", "", "for files: the http(s) URL they were saved from, so that relative links resolve\n(default: the file's own file:// URL, against which only absolute links count)")
	var cf configFlags
	m.addConfigFlags(fset, &cf)
	inputs, err := parseInterspersed(fset, args)
	if err != nil {
		return err
	}
	if len(inputs) == 0 {
		return usageErrorf(fset, "extract: want at least one FILE or URL")
	}
	var base *url.URL
	if *baseFlag != "" {
		if base, err = url.Parse(*baseFlag); err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
			return usageErrorf(fset, "extract: --base %q: want an absolute http(s) URL", *baseFlag)
		}
	}
	cfg, err := cf.load()
	if err != nil {
		return err
	}
	var fetcher *crawler.Fetcher
	var errs []error
	enc := json.NewEncoder(m.Stdout)
	enc.SetEscapeHTML(false)
	for _, in := range inputs {
		out := extractOutput{Input: in}
		doc, err := m.extractOne(ctx, cfg, &fetcher, in, base)
		if err != nil {
			errs = append(errs, err)
			out.Error = errorText(err) // as the error line of every command: no package names
		} else {
			out = extractOutput{Input: in, URL: doc.URL, CanonicalURL: doc.CanonicalURL, Title: doc.Title,
				Lang: doc.Lang, Charset: doc.Charset, NoIndex: doc.NoIndex, NoFollow: doc.NoFollow,
				Fallback: doc.Fallback, Truncated: doc.Truncated, Links: len(doc.Links), Text: doc.Text}
		}
		if *asJSON {
			if err := enc.Encode(out); err != nil {
				return fmt.Errorf("extract: write: %w", err)
			}
			continue
		}
		printExtract(m, out)
	}
	if len(errs) > 0 {
		// Each error was printed with its input above.
		return fmt.Errorf("extract: %d of %d input%s failed", len(errs), len(inputs), plural(len(inputs)))
	}
	return nil
}

// extractOne extracts a file (as if fetched from base, when not nil) or a
// fetched URL.
func (m *Main) extractOne(ctx context.Context, cfg Config, fetcher **crawler.Fetcher, in string, base *url.URL) (*extract.Document, error) {
	opts := extract.Options{MaxBodySize: int64(cfg.Fetch.MaxBodySize)}
	if !strings.HasPrefix(in, "http://") && !strings.HasPrefix(in, "https://") {
		b, err := os.ReadFile(in)
		if err != nil {
			return nil, fmt.Errorf("extract: %w", err)
		}
		if base == nil {
			base = fileURL(in)
		}
		doc, err := extract.ExtractBytes(b, "", base, opts)
		if err != nil {
			return nil, fmt.Errorf("extract %s: %w", in, err)
		}
		return doc, nil
	}
	if *fetcher == nil {
		f, err := crawler.NewFetcher(crawler.FetchOptions{
			UserAgent: cfg.Fetch.UserAgent, Timeout: time.Duration(cfg.Fetch.Timeout),
			MaxBodySize: int64(cfg.Fetch.MaxBodySize), RespectRobots: cfg.Fetch.RespectRobots,
			MaxRedirects: cfg.Fetch.MaxRedirects,
		})
		if err != nil {
			return nil, err
		}
		*fetcher = f
	}
	resp, err := (*fetcher).Fetch(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("extract %s: %w", in, err)
	}
	final, err := url.Parse(resp.FinalURL)
	if err != nil {
		return nil, fmt.Errorf("extract %s: %w", in, err)
	}
	opts.XRobotsTag = resp.Header.Get("X-Robots-Tag")
	doc, err := extract.ExtractBytes(resp.Body, resp.ContentType, final, opts)
	if err != nil {
		return nil, fmt.Errorf("extract %s: %w", in, err)
	}
	doc.Truncated = doc.Truncated || resp.Truncated
	return doc, nil
}

func printExtract(m *Main, o extractOutput) {
	fmt.Fprintf(m.Stdout, "== %s\n", o.Input)
	if o.Error != "" {
		fmt.Fprintf(m.Stdout, "error:     %s\n\n", o.Error)
		return
	}
	fmt.Fprintf(m.Stdout, "url:       %s\n", o.URL)
	if o.CanonicalURL != "" {
		fmt.Fprintf(m.Stdout, "canonical: %s\n", o.CanonicalURL)
	}
	fmt.Fprintf(m.Stdout, "title:     %s\nlanguage:  %s\ncharset:   %s\nlinks:     %d\n", o.Title, o.Lang, o.Charset, o.Links)
	var flags []string
	for _, f := range []struct {
		on   bool
		name string
	}{{o.NoIndex, "noindex"}, {o.NoFollow, "nofollow"}, {o.Fallback, "fallback (no article found: visible text)"}, {o.Truncated, "truncated"}} {
		if f.on {
			flags = append(flags, f.name)
		}
	}
	if len(flags) > 0 {
		fmt.Fprintf(m.Stdout, "flags:     %s\n", strings.Join(flags, ", "))
	}
	n := utf8.RuneCountInString(o.Text)
	fmt.Fprintf(m.Stdout, "text:      %d character%s\n\n%s\n\n", n, plural(n), o.Text)
}
