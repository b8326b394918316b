package copyweb

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/text/encoding/simplifiedchinese"
)

var fixtureConfig = Config{Seed: 7, PerKind: 2, ShortPages: 2}

func TestGenerateIsDeterministicAndComplete(t *testing.T) {
	w1, err := Generate(fixtureSources(6), fixtureConfig)
	if err != nil {
		t.Fatal(err)
	}
	w2, err := Generate(fixtureSources(6), fixtureConfig)
	if err != nil {
		t.Fatal(err)
	}
	if len(w1.Pages) != len(w2.Pages) {
		t.Fatalf("two webs of one seed: %d and %d pages", len(w1.Pages), len(w2.Pages))
	}
	for i, p := range w1.Pages {
		if q := w2.Pages[i]; p.ID != q.ID || !bytes.Equal(p.Body, q.Body) {
			t.Errorf("page %d: %s and %s differ between two webs of one seed", i, p.ID, q.ID)
		}
	}
	count := map[Kind]int{}
	for _, p := range w1.Pages {
		count[p.Kind]++
		if p.Of == "" {
			continue
		}
		of := w1.Page(p.Of)
		if of == nil || of.Cluster != p.Cluster {
			t.Errorf("%s (%s) is a copy of %q, which is not a page of its cluster", p.ID, p.Kind, p.Of)
		}
		if bytes.Equal(p.Body, of.Body) && p.Kind != Mirror {
			t.Errorf("%s (%s) has the bytes of %s", p.ID, p.Kind, p.Of)
		}
	}
	for _, k := range append(CopyKinds, KeepKinds...) {
		want := fixtureConfig.PerKind
		switch k {
		case Original, SameTemplate, Index:
			want = 0
		case Short:
			want = fixtureConfig.ShortPages
		}
		if count[k] < want || k != SameTemplate && count[k] == 0 {
			t.Errorf("%d pages of kind %s, want %d", count[k], k, max(want, 1))
		}
	}
}

func TestGBKCopiesDecodeToTheirOriginal(t *testing.T) {
	w, err := Generate(fixtureSources(4), fixtureConfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range w.Pages {
		if p.Kind != GBKHeader && p.Kind != GBKMeta {
			continue
		}
		utf, err := simplifiedchinese.GBK.NewDecoder().Bytes(p.Body)
		if err != nil {
			t.Fatal(err)
		}
		orig, err := parsePage(w.Page(p.Of).Body)
		if err != nil {
			t.Fatal(err)
		}
		if want := collapse(textOf(orig.content)); !strings.Contains(string(utf), orig.paras[0].FirstChild.Data) || want == "" {
			t.Errorf("%s: decoded GBK page lacks its original's first paragraph", p.ID)
		}
		hasMeta := bytes.Contains(p.Body, []byte(`<meta charset="gbk">`))
		if hasMeta != (p.Kind == GBKMeta) || strings.Contains(p.ContentType, "GBK") != (p.Kind == GBKHeader) {
			t.Errorf("%s (%s): meta %v, Content-Type %q", p.ID, p.Kind, hasMeta, p.ContentType)
		}
	}
}

func TestTraditionalCopiesAreConverted(t *testing.T) {
	w, err := Generate(fixtureSources(4), fixtureConfig)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range w.Pages {
		if p.Kind == Traditional {
			n++
			// 图书馆预算 and 维修 are written 圖書館預算 and 維修 in Traditional script.
			if bytes.Contains(p.Body, []byte("图书馆")) || bytes.Contains(p.Body, []byte("维修")) {
				t.Errorf("%s still has Simplified characters", p.ID)
			}
		}
	}
	if n == 0 {
		t.Fatal("no Traditional copy")
	}
}

func TestHandlerServesThePagesAndRobots(t *testing.T) {
	w, err := Generate(fixtureSources(3), fixtureConfig)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(w.Handler())
	defer srv.Close()
	get := func(path string) (int, string, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}
	if code, _, body := get("/robots.txt"); code != 200 || body != robotsTxt {
		t.Errorf("robots.txt: %d %q", code, body)
	}
	for _, p := range w.Pages {
		code, ct, body := get(p.Path())
		if code != 200 || ct != p.ContentType || body != string(p.Body) {
			t.Errorf("%s: status %d, Content-Type %q, %d bytes; want 200, %q, %d bytes", p.Path(), code, ct, len(body), p.ContentType, len(p.Body))
		}
	}
	if code, _, _ := get("/w?p=nothing"); code != 404 {
		t.Errorf("an unknown page: status %d, want 404", code)
	}
}
