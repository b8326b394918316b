package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/storage"
	"github.com/simcrawl/simcrawl/warc"
)

// Fields of the metadata record that `crawl export --format warc` writes
// after each response record (WARC-Concurrent-To names the response).
const (
	warcFieldFingerprint = "simcrawl-fingerprint" // 16 lower-case hex digits, as in the JSONL export
	warcFieldThin        = "simcrawl-thin"        // true: too little text to fingerprint
	warcFieldPageID      = "simcrawl-page-id"
	warcFieldURL         = "simcrawl-url" // the requested URL; WARC-Target-URI is the final one
	warcFieldTruncated   = "simcrawl-truncated"
	// The data directory of the page, only in an export of several (the
	// workers of a distributed crawl): the page ID is unique within it.
	warcFieldData = "simcrawl-data"
)

// exportWARC writes every stored page as a WARC/1.1 response record (HTTP
// status line, stored headers, raw body), each followed by a metadata
// record with its fingerprint, after one warcinfo record; every record is
// its own gzip member. A page stored without a body (imported by
// `crawl dedup` from text) becomes a text/plain resource record instead.
// The body is the one stored, so the headers are made to describe it:
// Content-Encoding and Transfer-Encoding are left out and Content-Length
// is its length. The pages of every directory of set follow one warcinfo
// record, directory by directory; counts[i] is set to how many came from
// set.Dirs[i].
func exportWARC(ctx context.Context, set *crawler.DataSet, w io.Writer, counts []int) error {
	ww := warc.NewWriter(w, true)
	infoID := warc.NewRecordID()
	if _, err := ww.WriteRecord(warc.Header{
		{Name: "WARC-Type", Value: warc.TypeWarcinfo},
		{Name: "WARC-Record-ID", Value: infoID},
		{Name: "WARC-Date", Value: warc.FormatDate(time.Now())},
		{Name: "Content-Type", Value: "application/warc-fields"},
	}, warc.FormatFields(
		warc.Field{Name: "software", Value: "simcrawl"},
		warc.Field{Name: "format", Value: "WARC File Format 1.1"},
		warc.Field{Name: "description", Value: "pages kept by simcrawl's ContentSeen stage; metadata records carry their SimHash fingerprints"},
	)); err != nil {
		return err
	}
	return set.Each(func(i int, d *crawler.Data) error {
		tag := sourceTag(set, d)
		return d.Store.Pages(ctx, true, func(p *storage.Page) error {
			if err := writePageRecords(ww, infoID, p, tag); err != nil {
				return fmt.Errorf("page %d: %w", p.ID, err)
			}
			counts[i]++
			return nil
		})
	})
}

// writePageRecords writes p's response (or resource) and metadata
// records; data, when not "", is the data directory the page came from.
func writePageRecords(ww *warc.Writer, infoID string, p *storage.Page, data string) error {
	target := p.FinalURL
	if target == "" {
		target = p.URL
	}
	date := warc.FormatDate(p.FetchedAt)
	id := warc.NewRecordID()
	h := warc.Header{
		{Name: "WARC-Type", Value: warc.TypeResponse},
		{Name: "WARC-Record-ID", Value: id},
		{Name: "WARC-Date", Value: date},
		{Name: "WARC-Target-URI", Value: target},
		{Name: "WARC-Warcinfo-ID", Value: infoID},
	}
	var block []byte
	if p.Body == nil {
		h.Set("WARC-Type", warc.TypeResource)
		h.Set("Content-Type", "text/plain; charset=utf-8")
		block = []byte(p.Text)
	} else {
		status := p.Status
		if status == 0 {
			status = http.StatusOK
		}
		header := p.Header
		if header.Get("Content-Type") == "" && p.ContentType != "" {
			header = header.Clone()
			if header == nil {
				header = http.Header{}
			}
			header.Set("Content-Type", p.ContentType)
		}
		h.Set("Content-Type", "application/http; msgtype=response")
		h.Set("WARC-Payload-Digest", warc.Digest(p.Body))
		block = warc.ResponseBlock(status, header, p.Body)
	}
	if _, err := ww.WriteRecord(h, block); err != nil {
		return err
	}
	fields := []warc.Field{
		{Name: warcFieldFingerprint, Value: fmt.Sprintf("%016x", p.Fingerprint)},
		{Name: warcFieldThin, Value: strconv.FormatBool(p.Thin)},
		{Name: warcFieldPageID, Value: strconv.FormatUint(p.ID, 10)},
		{Name: warcFieldURL, Value: p.URL},
		{Name: warcFieldTruncated, Value: strconv.FormatBool(p.Truncated)},
	}
	if data != "" {
		fields = append(fields, warc.Field{Name: warcFieldData, Value: data})
	}
	_, err := ww.WriteRecord(warc.Header{
		{Name: "WARC-Type", Value: warc.TypeMetadata},
		{Name: "WARC-Record-ID", Value: warc.NewRecordID()},
		{Name: "WARC-Date", Value: date},
		{Name: "WARC-Target-URI", Value: target},
		{Name: "WARC-Concurrent-To", Value: id},
		{Name: "WARC-Warcinfo-ID", Value: infoID},
		{Name: "Content-Type", Value: "application/warc-fields"},
	}, warc.FormatFields(fields...))
	return err
}
