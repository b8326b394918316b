package copyweb

// A Kind says how a page of the web was made. Copies (Positive) must be
// dropped as duplicates of their cluster; every other page must be kept.
type Kind string

// Copies: each is made from one page of the web.
const (
	Mirror        Kind = "mirror"         // the same bytes under another URL
	Ads           Kind = "ads"            // ad boxes injected (top of body, mid-article)
	Counters      Kind = "counters"       // view counter and a date line before the article
	Comments      Kind = "comments"       // a comment thread and form after the article
	Related       Kind = "related"        // a related-links box after the article
	Retemplate    Kind = "retemplate"     // the article moved into another site's chrome
	Retitle       Kind = "retitle"        // a new headline (title, h1, og:title)
	EditWords     Kind = "edit-words"     // 1-3% of the words replaced or deleted
	DropParagraph Kind = "drop-paragraph" // one short paragraph removed
	GBKHeader     Kind = "gbk-header"     // re-encoded as GBK, declared in the HTTP header only
	GBKMeta       Kind = "gbk-meta"       // re-encoded as GBK, declared in a <meta> only
	Traditional   Kind = "traditional"    // Simplified Chinese converted to Traditional (OpenCC s2t)
	Repost        Kind = "repost"         // a source line ("Originally published at", "转载") added
	Chain         Kind = "chain"          // a copy of a copy: a second transformation of a copy
	ShortRetitle  Kind = "short-retitle"  // a short page under another headline
)

// Pages that must be kept.
const (
	Original     Kind = "original"      // a corpus page
	SameTemplate Kind = "same-template" // a corpus page sharing its site's template with other articles
	Rewrite      Kind = "rewrite"       // 30-40% of an article's words changed: another text
	Short        Kind = "short"         // a short article on a template shared with other short ones
	Index        Kind = "index"         // a page listing links (the site's hubs)
)

// CopyKinds are the kinds of copy in table order.
var CopyKinds = []Kind{Mirror, Ads, Counters, Comments, Related, Retemplate, Retitle, EditWords,
	DropParagraph, GBKHeader, GBKMeta, Traditional, Repost, Chain, ShortRetitle}

// KeepKinds are the kinds that must be kept, in table order.
var KeepKinds = []Kind{Original, SameTemplate, Rewrite, Short, Index}

// Positive reports whether k is a kind of copy.
func (k Kind) Positive() bool {
	for _, c := range CopyKinds {
		if c == k {
			return true
		}
	}
	return false
}

// zhOnly reports whether k applies to Chinese pages only.
func (k Kind) zhOnly() bool { return k == GBKHeader || k == GBKMeta || k == Traditional }
