package copyweb

import (
	"fmt"
	"regexp"
	"sync"

	"github.com/longbridgeapp/opencc"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/simplifiedchinese"
)

var (
	charsetMeta = regexp.MustCompile(`(?i)<meta[^>]*charset[^>]*>`)
	headOpen    = regexp.MustCompile(`(?i)<head[^>]*>`)
)

// toGBK re-encodes a UTF-8 page as GBK. Its own charset declarations are
// removed; with meta, a <meta charset="gbk"> declares the new one (else the
// caller's HTTP header must). Characters GBK lacks become character
// references, so no text is lost.
func toGBK(page []byte, meta bool) ([]byte, error) {
	page = charsetMeta.ReplaceAll(page, nil)
	if meta {
		decl := []byte(`<meta charset="gbk">`)
		if loc := headOpen.FindIndex(page); loc != nil {
			page = append(page[:loc[1]:loc[1]], append(decl, page[loc[1]:]...)...)
		} else {
			page = append(decl, page...)
		}
	}
	enc := encoding.HTMLEscapeUnsupported(simplifiedchinese.GBK.NewEncoder())
	out, err := enc.Bytes(page)
	if err != nil {
		return nil, fmt.Errorf("copyweb: encode gbk: %w", err)
	}
	return out, nil
}

var (
	s2tOnce sync.Once
	s2t     *opencc.OpenCC
	s2tErr  error
)

// traditional converts Simplified Chinese text to Traditional script with
// OpenCC's s2t dictionaries.
func traditional(s string) (string, error) {
	s2tOnce.Do(func() { s2t, s2tErr = opencc.New("s2t") })
	if s2tErr != nil {
		return "", fmt.Errorf("copyweb: opencc: %w", s2tErr)
	}
	return s2t.Convert(s)
}
