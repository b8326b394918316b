package warc_test

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"net/http"
	"time"

	"github.com/simcrawl/simcrawl/warc"
)

// Write a response record and a metadata record that refers to it into a
// .warc.gz, then read them back.
func Example() {
	var file bytes.Buffer
	w := warc.NewWriter(&file, true)
	date := warc.FormatDate(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	id := warc.NewRecordID()
	block := warc.ResponseBlock(200, http.Header{"Content-Type": {"text/html"}}, []byte("<title>Hi</title>"))
	if _, err := w.WriteRecord(warc.Header{
		{Name: "WARC-Type", Value: warc.TypeResponse}, {Name: "WARC-Record-ID", Value: id},
		{Name: "WARC-Date", Value: date}, {Name: "WARC-Target-URI", Value: "http://example.com/"},
		{Name: "Content-Type", Value: "application/http; msgtype=response"},
	}, block); err != nil {
		log.Fatal(err)
	}
	if _, err := w.WriteRecord(warc.Header{
		{Name: "WARC-Type", Value: warc.TypeMetadata}, {Name: "WARC-Record-ID", Value: warc.NewRecordID()},
		{Name: "WARC-Date", Value: date}, {Name: "WARC-Concurrent-To", Value: id},
		{Name: "Content-Type", Value: "application/warc-fields"},
	}, warc.FormatFields(warc.Field{Name: "fingerprint", Value: "0123456789abcdef"})); err != nil {
		log.Fatal(err)
	}

	r, err := warc.NewReader(&file)
	if err != nil {
		log.Fatal(err)
	}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		switch rec.Type() {
		case warc.TypeResponse:
			resp, err := warc.ReadResponse(rec.Block)
			if err != nil {
				log.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				log.Fatal(err)
			}
			fmt.Println(rec.Header.Get("WARC-Target-URI"), resp.StatusCode, string(body))
		case warc.TypeMetadata:
			b, err := io.ReadAll(rec.Block)
			if err != nil {
				log.Fatal(err)
			}
			fmt.Println("fingerprint", warc.ParseFields(b).Get("fingerprint"), rec.Header.Get("WARC-Concurrent-To") == id)
		}
	}
	// Output:
	// http://example.com/ 200 <title>Hi</title>
	// fingerprint 0123456789abcdef true
}
