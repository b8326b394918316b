package extract

import (
	"bytes"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
	"golang.org/x/text/encoding/unicode"
)

const (
	hansText     = "港海豹回到了河口的沙洲，志愿者数到四十二只。"
	hantText     = "港海豹回到了河口的沙洲，志願者數到四十二隻。"
	germanText   = "Die Bürger der Stadt München können ab nächster Woche über die Änderungen abstimmen; für Straßen, Brücken und Grünflächen stehen größere Beträge zur Verfügung, schön übersichtlich."
	koreanText   = "서울의 시민들은 다음 주부터 도로와 다리와 공원에 대한 새 예산에 투표할 수 있습니다. 시청은 자세한 안내문을 모든 가정에 보냈습니다."
	japaneseText = "東京の市民は来週から道路や橋や公園の新しい予算について投票できます。市役所は詳しい案内をすべての家庭に送りました。"
)

func page(metaCharset, body string) string {
	head := ""
	if metaCharset != "" {
		head = `<meta http-equiv="Content-Type" content="text/html; charset=` + metaCharset + `">`
	}
	return "<html><head>" + head + "<title>t</title></head><body><p>" + body + "</p></body></html>"
}

func encode(t *testing.T, e encoding.Encoding, s string) []byte {
	t.Helper()
	b, err := e.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return b
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name        string
		body        []byte
		contentType string
		wantCharset string
		wantText    string
	}{
		{"gbk meta", encode(t, simplifiedchinese.GBK, page("gbk", hansText)), "text/html", "gbk", hansText},
		{"gb2312 meta", encode(t, simplifiedchinese.GBK, page("gb2312", hansText)), "text/html", "gbk", hansText},
		{"gb18030 header", encode(t, simplifiedchinese.GB18030, page("", hansText)), "text/html; charset=GB18030", "gb18030", hansText},
		{"gbk header beats meta", encode(t, simplifiedchinese.GBK, page("iso-8859-1", hansText)), "text/html; charset=gbk", "gbk", hansText},
		{"big5 meta", encode(t, traditionalchinese.Big5, page("big5", hantText)), "text/html", "big5", hantText},
		{"big5 header", encode(t, traditionalchinese.Big5, page("", hantText)), "text/html; charset=big5", "big5", hantText},
		{"undeclared gb18030 sniffed", encode(t, simplifiedchinese.GB18030, page("", strings.Repeat(hansText, 3))), "text/html", "gb18030", strings.Repeat(hansText, 3)},
		{"lying meta: gb2312 on utf-8", []byte(page("gb2312", hansText)), "text/html", "utf-8", hansText},
		{"lying header: latin-1 on utf-8", []byte(page("", hansText)), "text/html; charset=iso-8859-1", "utf-8", hansText},
		{"windows-1252 meta", encode(t, charmap.Windows1252, page("windows-1252", "café crème")), "text/html", "windows-1252", "café crème"},
		{"latin-1 undeclared", encode(t, charmap.Windows1252, page("", "naïve façade")), "text/html", "windows-1252", "naïve façade"},
		{"utf-16le bom", encode(t, unicode.UTF16(unicode.LittleEndian, unicode.UseBOM), page("", hansText)), "text/html", "utf-16le", hansText},
		{"utf-8 bom", append([]byte{0xEF, 0xBB, 0xBF}, page("gbk", hansText)...), "text/html", "utf-8", hansText},
		{"ascii", []byte(page("", "plain words")), "", "utf-8", "plain words"},
		{"invalid utf-8 declared", []byte(page("utf-8", "ok \xff\xfe bytes")), "text/html; charset=utf-8", "utf-8", "ok \uFFFD bytes"},
		// GBK under "utf-8" in the header and the meta: the bytes win.
		{"lying header and meta: utf-8 on gbk", encode(t, simplifiedchinese.GBK, page("utf-8", strings.Repeat(hansText, 2))), "text/html; charset=utf-8", "gb18030", strings.Repeat(hansText, 2)},
		// A UTF-8 Chinese page with one bad byte stays UTF-8.
		{"utf-8 han with a bad byte", []byte(page("utf-8", hansText+"\xff"+hansText)), "text/html; charset=utf-8", "utf-8", hansText + "\uFFFD" + hansText},
		// Other legacy charsets under "utf-8" are not taken for GBK: their
		// bytes become U+FFFD, as declared, not rare Chinese characters
		// (the text is not compared: "" means any).
		{"latin-1 under utf-8", encode(t, charmap.Windows1252, page("utf-8", germanText)), "text/html; charset=utf-8", "utf-8", ""},
		{"euc-kr under utf-8", encode(t, korean.EUCKR, page("utf-8", koreanText)), "text/html; charset=utf-8", "utf-8", ""},
		{"shift_jis under utf-8", encode(t, japanese.ShiftJIS, page("utf-8", japaneseText)), "text/html; charset=utf-8", "utf-8", ""},
	}
	u, _ := url.Parse("http://example.com/")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ExtractBytes(tt.body, tt.contentType, u, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Charset != tt.wantCharset {
				t.Errorf("Charset = %q, want %q", d.Charset, tt.wantCharset)
			}
			if tt.wantText != "" && d.Text != tt.wantText {
				t.Errorf("Text = %q, want %q", d.Text, tt.wantText)
			}
		})
	}
}

// TestMetaCharsetLate finds a declaration behind a long script, past the
// 1024 bytes the HTML standard's prescan reads.
func TestMetaCharsetLate(t *testing.T) {
	src := "<html><head><script>" + strings.Repeat("var x = 1;\n", 300) + "</script>" +
		`<meta charset="gbk"></head><body><p>` + hansText + "</p></body></html>"
	d, err := ExtractBytes(encode(t, simplifiedchinese.GBK, src), "text/html", &url.URL{Scheme: "http", Host: "x"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Charset != "gbk" || !bytes.Contains([]byte(d.Text), []byte("港海豹")) {
		t.Errorf("Charset = %q, Text = %q; want gbk and the Han text", d.Charset, d.Text)
	}
}
