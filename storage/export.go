package storage

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
)

// ExportRecord is one line of `crawl export --format jsonl`, in this field
// order (a user-facing contract): id, url, final_url, status, content_type,
// lang, title, text, fingerprint (16 lower-case hex digits), thin,
// truncated, fetched_at (RFC 3339, TimeFormat), depth, then data only in an
// export of several data directories (ExportJSONLFrom). It is a plain
// value, the type a reader of the export decodes into.
type ExportRecord struct {
	ID          uint64 `json:"id"`
	URL         string `json:"url"`
	FinalURL    string `json:"final_url"`
	Status      int    `json:"status"`
	ContentType string `json:"content_type"`
	Lang        string `json:"lang"`
	Title       string `json:"title"`
	Text        string `json:"text"`
	Fingerprint string `json:"fingerprint"`
	Thin        bool   `json:"thin"`
	Truncated   bool   `json:"truncated"`
	FetchedAt   string `json:"fetched_at"`
	Depth       int    `json:"depth"`
	// Data names the data directory the page is stored in, when one export
	// covers several (the workers of a distributed crawl): ID is unique
	// within it, so (Data, ID) is unique in the export.
	Data string `json:"data,omitempty"`
}

// ExportJSONL writes every stored page, in ID order and without its body,
// as one JSON object per line (ExportRecord), and returns how many it wrote.
// It streams like Pages. HTML characters in texts are not escaped.
func (s *Store) ExportJSONL(ctx context.Context, w io.Writer) (n int, err error) {
	return s.ExportJSONLFrom(ctx, w, "")
}

// ExportJSONLFrom is ExportJSONL with every record's Data set to data (for
// an export of several data directories; "" leaves it out).
func (s *Store) ExportJSONLFrom(ctx context.Context, w io.Writer, data string) (n int, err error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	err = s.Pages(ctx, false, func(p *Page) error {
		if err := enc.Encode(ExportRecord{
			ID: p.ID, URL: p.URL, FinalURL: p.FinalURL, Status: p.Status,
			ContentType: p.ContentType, Lang: p.Lang, Title: p.Title, Text: p.Text,
			Fingerprint: hex16(p.Fingerprint), Thin: p.Thin, Truncated: p.Truncated,
			FetchedAt: p.FetchedAt.UTC().Format(TimeFormat), Depth: p.Depth, Data: data,
		}); err != nil {
			return fmt.Errorf("storage: export page %d: %w", p.ID, err)
		}
		n++
		return nil
	})
	if err != nil {
		return n, err
	}
	if err := bw.Flush(); err != nil {
		return n, fmt.Errorf("storage: export: %w", err)
	}
	return n, nil
}
