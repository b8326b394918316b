// Package extract turns a fetched page into the text that ContentSeen
// fingerprints, plus the links the crawler may follow.
//
// # Idea
//
// Two copies of one article on different sites differ in navigation, ads,
// view counters, timestamps, related-link boxes and comments; two different
// articles on one site share all of those. Extraction therefore keeps the
// article and throws the rest away, in this order:
//
//  1. Decode. A byte-order mark wins; then the bytes themselves when they
//     are valid UTF-8 with non-ASCII content, over any declared charset,
//     HTTP header included (stale declarations are common, chance-valid
//     UTF-8 in GBK/Big5/Latin-1 text practically never happens); then the
//     Content-Type charset; then <meta charset>/http-equiv in the first
//     8 KiB; then sniffing (GB18030 if a trial decode is mostly Han, else
//     windows-1252). GB2312 and GBK labels decode as GBK.
//  2. Parse once (golang.org/x/net/html) and read the title, canonical
//     URL, language, meta robots and every link from the untouched tree,
//     in one walk.
//  3. Remove boilerplate: scripts, styles, form controls, <time>, nav,
//     header, footer, aside, hidden elements, navigation roles, and elements
//     whose class or id has a marker token (ad, sponsor, comment, related,
//     recommend, newsletter, cookie, paywall, tags, author, rating, and
//     German, French, Spanish and pinyin ones like kommentare, publicidad,
//     xgwz and pinglun). Tokens are class/id words split at punctuation and
//     camelCase humps, so "heading" never matches "head"; a token after
//     has/with/no ("has-ads", "no_caption") or in a BEM modifier
//     ("Section--Ads") names a property, not the element. Soft markers
//     (share, date, byline, counter, feed, meta, paywall) remove an element
//     only when it holds no prose (400 bytes of paragraphs), so a theme's
//     "entry share" content div stays; navigation markers (nav, menu,
//     breadcrumb) only an element with links and no prose (MathJax's
//     "CtxtMenu" formula boxes and a shop's "tab-menu" of description
//     tabs stay). Guards: html, body, main, article, role=main and
//     itemprop=articleBody are never removed for their class, nor are the
//     ancestors of an articleBody/main with text or of an <article> with
//     prose and a quarter of the page's text ("theiaStickySidebar"
//     wrappers), nor any element holding more than half of the page's text;
//     an id of more than three words is a heading slug and is ignored. The
//     page is parsed as a browser without scripts sees it: a <noscript>
//     with 200+ bytes of text is kept (script-rendered blog posts).
//  4. Run readability (codeberg.org/readeck/go-readability/v2) on that same
//     document, clean its article again (now also figure captions and
//     credits under 150 bytes: labels and credits differ between two sites
//     running one story, a sentence-long caption does not), and render it
//     as text: one block per line, so list items and cells are never glued
//     ("onetwo"); blocks that are 80 % anchor text are dropped. A second,
//     class-blind finder (text density, as CETD and jusText do: long
//     low-link paragraphs against short and link text) replaces
//     readability's article when that has under 1000 bytes of prose and
//     the density article twice as much (readability picking an open
//     letter's signatory list over the letter).
//  5. Fall back to the page's visible text minus boilerplate and link-dense
//     blocks when readability finds nothing or less than 200 characters on
//     a page with three times more text (index pages, lists, forums);
//     Document.Fallback says so. A page with visible text never yields
//     empty text: when even the fallback is short, link text is kept. Then
//     drop boilerplate lines by their wording (boiler.go): short lines
//     starting with a "related"/"read more" heading, a photo credit or
//     source, a comment prompt, share/print/next-post labels, tag and
//     category lines, bylines, paywall, newsletter, follow-us and
//     call-to-action notes, legal lines (Impressum, Mentions légales,
//     责任编辑, 免责声明, Отзывы), in English, German, French, Spanish, Portuguese, Polish, Italian,
//     Russian and Chinese; lines that are only a written date
//     ("segunda-feira, 22 de janeiro de 2018"); short lines carrying a
//     credit (©, "Foto:", Getty Images); copyright, cookie and blog
//     post-meta notes. A line that is only a related heading ("相关内容",
//     "Lesen Sie auch:", "APP精彩推荐") also drops the short headline
//     lines after it, which survive when their links are script-opened
//     or too few to make the block link-dense; when prose follows them,
//     the last stays (it heads the next section: "See also", its links
//     gone, then "Footnotes"). A text of only such lines is kept whole.
//  6. NormalizeText removes counters and timestamps ("1,234 views",
//     "阅读 12345", "Updated 3/4/2026 13:45", "2 hours ago",
//     "更新时间：2026-11-02") so that copies differing only in them agree.
//
// # Which readability
//
// go-shiori/go-readability is archived; its successor readeck v2.1.1 was
// compared on the 130 cases of ../shared/corpus/readability, each library
// given the raw page, token F1 of its text against expected.html
// (EXTRACT_COMPARE=1 GOMAXPROCS=1 go test -run TestCompareReadability -v,
// 2-core machine shared with other jobs, CPU time measured by getrusage):
//
//	readeck v2.1.1   mean F1 0.995   96 pages/cpu-s
//	go-shiori        mean F1 0.993   70 pages/cpu-s
//	this package     mean F1 0.982  161 pages/cpu-s (readeck + cleaning)
//
// (Re-run 2026-11-25 at load 22, after the density finder and line lexicon
// were added: readeck 65, go-shiori 46, this package 89 pages/cpu-s, mean
// F1 0.980; interleaved with the previous version, -6 % pages/cpu-s, p=0.09.
// Re-run 2026-11-26 after the speed work below: see Cost.)
//
// readeck is as good, 35-40 % faster, and maintained, so it is used. This
// package scores a little below raw readability because expected.html is
// Readability.js output, which keeps bylines, dates, tables of contents and
// link lists that this package removes on purpose; it is faster because the
// cleaned tree is smaller and JSON-LD metadata is not parsed.
//
// # Quality
//
// Trafilatura's benchmark (../shared/corpus/trafilatura, 990 real pages,
// 2,951 snippets that must be in the text and 2,966 that must not), scored
// as its evaluation does (go test -run 'TestQualityTrafilatura$' -v ./extract/;
// EXTRACT_MISSES=10 lists the worst pages): P 0.945, R 0.918, F 0.931
// (trafilatura 2.2.0 publishes P 0.906, R 0.943, F 0.924). The readability
// corpus: mean token F1 0.980; every gne-zh page keeps its article.
// Dates and counters removed by NormalizeText, and soft hyphens, cost a
// few "must contain" snippets on purpose.
//
// # Cost
//
// On the readability corpus (130 pages, one pass per run; EXTRACT_COMPARE=1
// go test -count=1 -run TestCompareReadability -v ./extract/), five runs
// alternating with the code before the speed work (a7b5f97) on a shared
// 2-core machine at load 17-20 (2026-11-26): median 161 pages per CPU
// second (135-179), readeck alone 90, go-shiori 54; the code before gave
// 131 (120-138). Over the readability and gne-zh corpus (178 pages, 34 MB;
// go test -run '^$' -bench ExtractCorpus -benchtime 3x -cpu 1), five runs
// alternating, load 19-25: median 198 pages per CPU second (182-217), the
// code before 167 (154-172). Absolute rates move with the machine (readeck
// alone ran at 69-72 on 2026-11-25, at 80-97 in these runs); the ratios
// move less. Parsing takes about a third of the time and readability two
// fifths; the rest is cleaning, links, rendering, the line lexicon and
// NormalizeText, whose regexps run only on lines and stretches that a hand
// scan says could match (normalize.go). The page text and the density
// article are rendered only on the pages that need them.
// Memory is a few times the page size for the tree.
//
// # Bounds and caveats
//
//   - At most Options.MaxBodySize bytes are read (10 MiB by default); the
//     text is capped at 2 MiB.
//   - Trees nested deeper than 512 elements are refused by x/net/html; such
//     pages get a tokenizer-only pass (title, links, visible text;
//     Fallback set). Pages with more than 60,000
//     elements or 2 MiB of text skip readability (its scoring is
//     superlinear) and use the fallback text.
//   - Binary bodies and non-HTML content types return ErrNotHTML wrapped
//     with the reason; a panic anywhere is recovered and returned as
//     ErrInternal.
//   - Dates are removed from the text wherever they occur, also inside
//     sentences: "on 2026-03-04 the court" becomes "on the court".
//   - Undeclared Big5 pages that are not valid UTF-8 are sniffed as
//     GB18030 and garbled; declared ones decode correctly.
//   - Link.NoFollow is the link's own rel (nofollow, ugc, sponsored);
//     Document.NoFollow is the page-wide directive. Links are deduplicated
//     by URL; a URL is nofollow only if every anchor to it was.
//
// All functions are safe for concurrent use.
package extract
