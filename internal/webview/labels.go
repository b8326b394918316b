package webview

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// The labels a person gives pairs live in the browser (localStorage, see
// static/labels.js) until downloaded: the browser posts them here as
// {"labels": [{"key": "SRC:DROP", "duplicate": BOOL}, ...]} and gets back a
// pairs file for `crawl eval --pairs`, one line a pair:
//
//	{"a": STORED_TEXT, "b": DROPPED_TEXT, "duplicate": BOOL, "note": "...", "a_url": URL, "b_url": URL}
//
// eval reads "a", "b" and "duplicate" and ignores the rest. The server
// keeps nothing: the request only reads the data directories.

// label is one label as the browser posts it.
type label struct {
	Key       string `json:"key"`
	Duplicate bool   `json:"duplicate"`
}

// pairLine is one line of the downloaded pairs file.
type pairLine struct {
	A         string `json:"a"`
	B         string `json:"b"`
	Duplicate bool   `json:"duplicate"`
	Note      string `json:"note"`
	AURL      string `json:"a_url"`
	BURL      string `json:"b_url"`
}

func (s *Server) pairsFile(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4<<20)
	var labels []label
	if err := json.Unmarshal([]byte(r.PostFormValue("labels")), &labels); err != nil {
		s.fail(w, http.StatusBadRequest, fmt.Errorf("labels: %w", err))
		return
	}
	if len(labels) == 0 {
		s.fail(w, http.StatusBadRequest, fmt.Errorf("no labels to download: label pairs on their pages first"))
		return
	}
	if len(labels) > maxLabelsPerFile {
		s.fail(w, http.StatusBadRequest, fmt.Errorf("%d labels: at most %d a file", len(labels), maxLabelsPerFile))
		return
	}
	lines := make([]pairLine, 0, len(labels))
	for _, l := range labels {
		srcText, idText, ok := strings.Cut(l.Key, ":")
		src, err1 := strconv.Atoi(srcText)
		id, err2 := strconv.ParseUint(idText, 10, 64)
		if !ok || err1 != nil || err2 != nil || src < 0 || src >= len(s.opts.Sources) {
			s.fail(w, http.StatusBadRequest, fmt.Errorf("label %q: want SOURCE:DROP", l.Key))
			return
		}
		st := s.opts.Sources[src].Store
		d, err := st.GetDrop(r.Context(), id)
		if err != nil {
			s.fail(w, http.StatusNotFound, fmt.Errorf("label %q: %w", l.Key, err))
			return
		}
		if d.Text == "" {
			s.fail(w, http.StatusBadRequest, fmt.Errorf("label %q: the dropped page's text was not kept (store.keep_drop_text off): no pair to write", l.Key))
			return
		}
		orig, _, err := s.keptPage(r.Context(), src, d)
		if err != nil {
			s.fail(w, http.StatusNotFound, fmt.Errorf("label %q: %w", l.Key, err))
			return
		}
		lines = append(lines, pairLine{
			A: orig.Text, B: d.Text, Duplicate: l.Duplicate, AURL: orig.URL, BURL: d.URL,
			Note: fmt.Sprintf("crawl serve: drop %d (%s, %d bits) of page %d", d.ID, d.Reason, d.Distance, orig.ID),
		})
	}
	w.Header().Set("Content-Type", "application/x-ndjson; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="simcrawl-pairs.jsonl"`)
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			s.opts.Logger.Debug("webview: write pairs", "err", err)
			return
		}
	}
	if err := bw.Flush(); err != nil {
		s.opts.Logger.Debug("webview: write pairs", "err", err)
	}
}
