package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// A rerun with --retry-failed says it fetched the failed URLs again, also
// when they fail again (a 404 stays one): the summary counted only pages
// fetched with a 2xx answer and said "fetched 0".
func TestRetryFailedSummarySaysSo(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`<html><body><article><p>An article long enough to fingerprint, about the harbour, the
ferry timetable, the new library and the covered market, with a link that is broken.</p>
<a href="/gone">gone</a></article></body></html>`))
	})
	srv := httptest.NewServer(mux) // /gone is a 404
	defer srv.Close()
	dir := t.TempDir()
	seeds := writeFile(t, dir, "seeds.txt", srv.URL+"/\n")
	args := []string{"--seeds", seeds, "--data", filepath.Join(dir, "data"), "--set", "fetch.delay=0s", "--set", "log.level=warn"}
	out, _, err := run(t, "", args...)
	if err != nil || !strings.Contains(out, "errors 1") {
		t.Fatalf("first crawl: %v\n%s", err, out)
	}
	out, _, err = run(t, "", append(args, "--retry-failed")...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"errors 1", "--retry-failed: 1 URL that had failed requested again", "URLs failed: 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary of the rerun lacks %q:\n%s", want, out)
		}
	}
	// A plain rerun requests nothing again and says nothing of it.
	if out, _, err = run(t, "", args...); err != nil || strings.Contains(out, "retry-failed") {
		t.Errorf("rerun without --retry-failed: %v\n%s", err, out)
	}
}
