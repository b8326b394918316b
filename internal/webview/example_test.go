package webview_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/internal/webview"
	"github.com/simcrawl/simcrawl/storage"
)

// A data directory with one stored page and one copy of it dropped,
// shown by the view: the Duplicates page counts one cluster.
func Example() {
	dir, err := os.MkdirTemp("", "webview-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	db, err := bolt.Open(filepath.Join(dir, crawler.DBFile), 0o600, nil)
	if err != nil {
		panic(err)
	}
	st, err := storage.New(db, storage.Options{KeepDropText: true})
	if err != nil {
		panic(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		id, err := st.PutTx(tx, &storage.Page{URL: "http://a.example/story", Title: "Story", Text: "the story", Fingerprint: 0xf0})
		if err != nil {
			return err
		}
		return st.PutDropTx(tx, &storage.Drop{URL: "http://b.example/copy", Title: "Story <b>copied</b>", Text: "the story",
			DuplicateOf: id, Reason: storage.ReasonExact, Fingerprint: 0xf0, MatchedFingerprint: 0xf0})
	})
	if err != nil {
		panic(err)
	}
	if err := db.Close(); err != nil {
		panic(err)
	}

	data, err := crawler.OpenData(dir, 0)
	if err != nil {
		panic(err)
	}
	defer data.Close()
	view, err := webview.New(context.Background(), webview.Options{Sources: []*crawler.Data{data}, K: 3})
	if err != nil {
		panic(err)
	}
	defer view.Close()
	rec := httptest.NewRecorder()
	view.ServeHTTP(rec, httptest.NewRequest("GET", "/dups", nil)) // or http.ListenAndServe("127.0.0.1:8080", view)
	body := rec.Body.String()
	fmt.Println(rec.Code, regexp.MustCompile(`id="cluster-count">\d+`).FindString(body))
	fmt.Println(regexp.MustCompile(`Story &lt;b&gt;copied&lt;/b&gt;`).MatchString(body))
	// Output:
	// 200 id="cluster-count">1
	// true
}
