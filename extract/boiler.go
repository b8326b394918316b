package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"regexp"
)

// Boilerplate lines. Markup does not always say what a block is: a
// "related" heading, a photo credit, a paywall note or a comments prompt
// is often a plain <p> or <h3> inside the article container. Their wording
// does say it, in few enough phrases per language that a lexicon finds
// them. Only short lines are looked at (a sentence of the article that
// happens to start with "Comments" is longer), and only at their start.

// maxBoilerRunes is the length above which a line is never boilerplate by
// its wording.
const maxBoilerRunes = 100

// boilerPrefixes start boilerplate lines, lower case, in the languages of
// the corpus. A prefix matches at a word boundary: "tags" matches "Tags:"
// and "Tags", not "Tagsüber".
var boilerPrefixes = map[string][]string{}

// relatedPhrases head "related" and "read more" blocks; see relatedHead.
const relatedPhrases = `related|related posts|related articles|related stories|related content|read more|read also|read next|see also|more from|more on this|more stories|you may also like|you might also like|recommended for you|trending now|most popular|most read
		mehr zum thema|mehr zu|mehr aus|mehr von|auch interessant|das könnte sie auch interessieren|das könnte dich auch interessieren|das könnte ihnen auch gefallen|lesen sie auch|lesen sie mehr|weitere artikel|weitere beiträge|weitere informationen|weitere infos|weitere tourentipps|siehe auch|zum weiterlesen|weiterlesen|schon gelesen|neueste artikel|neueste beiträge|ähnliche artikel|ähnliche beiträge|beiträge zum thema|artikel zum thema|heute empfehlen wir|empfehlungen|entdecke weitere|lade weitere
		à lire aussi|a lire aussi|lire aussi|lire la suite|voir aussi|sur le même sujet|dans la même rubrique|articles similaires|articles liés|et vidéos sur le sujet
		le puede interesar|te puede interesar|también te puede interesar|lee también|leer más|ver también|noticias relacionadas|artículos relacionados|más noticias|mira lo que tiene
		leia também|leia mais|veja também|notícias relacionadas|saiba mais
		czytaj też|czytaj także|czytaj więcej|zobacz też|zobacz także|polecamy
		leggi anche|potrebbe interessarti|articoli correlati
		читайте также|смотрите также|похожие статьи|по теме|читать далее
		ähnliche themen|ähnliche neuigkeiten|verwandte artikel|verwandte beiträge|verwandte themen|empfohlene beiträge|empfohlene artikel|mehr themen|noch mehr infos|das thema könnte|weiterführender link|weiterführende links|vorschau auf den nächsten artikel|entdecken sie jetzt|ezek is érdekelhetnek|más información|plus d'infos
		相关阅读|相关文章|相关新闻|相关推荐|相关内容|相关报道|相关链接|相关专题|延伸阅读|推荐阅读|猜你喜欢|热门推荐|热点推荐|精彩推荐|编辑推荐|为你推荐|为您推荐|大家都在看|热门文章|更多精彩|相關閱讀|相關文章|相關新聞|相關內容|相關報導|延伸閱讀|推薦閱讀|精彩推薦|熱門推薦`

func init() {
	for _, group := range []string{
		relatedPhrases,
		// captions, credits, sources
		`foto|fotos|photo|photos|bild|titelbild|bildquelle|bildnachweis|image|images|picture|credit|credits|photo credit|quelle|źródło|fuente|crédit|crédits|crédito|créditos|фото|источник|图片来源|图片|来源|來源|©|(c)|copyright
		getty images|shutterstock|istock|imago|dpa|reuters|afp|unsplash|beitragsbild|abbildung|quellenangaben|quellen|originalartikel|zusatzinformationen`,
		// comments
		`comments|comment|leave a comment|leave a reply|post a comment|add comment|add a comment|join the discussion|show comments|view comments
		kommentare|kommentar|kommentieren|kommentar schreiben|kommentare schreiben|kommentare geschlossen|kommentare insgesamt|diskutieren sie mit|sie müssen sich einloggen|sie sind aktuell nicht eingeloggt
		commentaires|commentaire|laisser un commentaire|réagir|comentarios|comentario|deja un comentario|deja una respuesta|comentários|deixe um comentário|komentarze|komentarz|commenti|lascia un commento
		комментарии|комментарий|отзывы|отзыв|оставить комментарий|评论|发表评论|网友评论|評論|發表評論|留言`,
		// sharing, printing, navigation between posts
		`share|share this|share on|share this article|share this post|tweet|teilen|artikel teilen|diesen artikel teilen|beitrag teilen|möchten sie den artikel teilen|partager|partagez|compartir|compartilhe|condividi|udostępnij|поделиться|分享|分享到
		print|drucken|rezept drucken|artikel drucken|drukuj|imprimer|imprimir|stampa|打印
		older post|newer post|previous post|next post|previous article|next article|vorheriger beitrag|nächster beitrag|vorheriger artikel|nächster artikel|zurück zur übersicht|article précédent|article suivant|artículo anterior|artículo siguiente|上一篇|下一篇|上一篇文章|下一篇文章`,
		// post metadata: categories, tags, dates, authors
		`this entry was posted|posted in|filed under|category|categories|tags|tagged|schlagwörter|schlagworte|stichworte|kategorie|kategorien|rubrik|themen|catégorie|catégories|étiquettes|mots-clés|categoría|etiquetas|kategoria|tagi|метки|теги|рубрика|标签|分类|關鍵字|关键词
		permalink|permalien|release date|aktualisiert am|erstellt am|veröffentlicht am|zuletzt aktualisiert|stand|publié le|mis à jour le|publicado el|publicado em|atualizado em|opublikowano|aktualizacja|опубликовано|обновлено|发布时间|发布日期|更新时间|责任编辑|编辑|作者|原标题|本文来源|文章来源|免责声明|声明|版权声明|編輯|責任編輯
		verfasst von|veröffentlichung|kommentarfeed|trackback|artikel gefallen|über den autor|über die autorin|about the author|autoren|kontakt|contact
		written by|posted by|author|von|by|par|por|autor|auteur|автор`,
		// ads, subscriptions, paywalls, newsletters
		`advertisement|advertising|sponsored|anzeige|werbung|reklama|publicidad|publicité|pubblicità|реклама|广告|廣告|推广
		subscribe|subscribe now|subscribe to|sign up|newsletter|abonnieren|jetzt abonnieren|abonnieren sie|abonnez-vous|inscrivez-vous|suscríbete|assine|zapisz się|подписаться|подпишитесь|订阅|關注我們|关注我们
		möchten sie weiterlesen|ja. ich bin abonnent|ja. ich benötige ein abo|pour lire la suite|to view the full story|to continue reading|already a subscriber|if you're seeing this message|if you’re seeing this message|hazte miembro|jetzt vorsorgen
		if you enjoyed|if you like this|help us|never miss|get the latest|for the latest stories|don't miss|nichts mehr verpassen|verpassen sie keine|follow us|folgen sie uns|folge uns|síguenos|suivez-nous|siga-nos|obserwuj nas
		suggested citation|zitiervorschlag|cite this article|we want to hear|submit a letter|letters to the editor|leserbrief
		this post contains|this article contains|this page contains|für links auf dieser seite|affiliate|enthält werbung|du musst eingeloggt|sie müssen angemeldet|you must be logged in|log in to|aufrufe|vergrößern|zum vergrößern|enlarge|bild vergrößern
		thank you for your support|danke für deine unterstützung|vielen dank für ihre unterstützung|(alle angaben ohne gewähr|alle angaben ohne gewähr|angaben ohne gewähr
		warning: creating|warning: cannot|notice: undefined|deprecated: |fatal error:
		impressum|mentions légales|datenschutz|datenschutzerklärung|privacy policy|terms of use|cookie|cookies|alle rechte vorbehalten|all rights reserved|tous droits réservés|todos los derechos reservados|wszelkie prawa zastrzeżone|материал защищен|все права защищены|版权所有|版權所有|aviso legal|nutzungsbedingungen
		war der artikel nützlich|war dieser artikel hilfreich|was this article helpful|was this helpful|bitte teilen sie uns ihre erfahrungen|bewerten sie|rate this|rating|bewertung|évaluer|оцените`,
	} {
		for line := range strings.SplitSeq(group, "\n") {
			for p := range strings.SplitSeq(strings.TrimSpace(line), "|") {
				if p == "" {
					continue
				}
				r, _ := utf8.DecodeRuneInString(p)
				key := string(r)
				boilerPrefixes[key] = append(boilerPrefixes[key], p)
			}
		}
	}
}

// boilerLine reports whether a rendered line is boilerplate by its wording.
func boilerLine(line string) bool {
	line = strings.TrimLeft(line, " \t-–—•·|»>*#:")
	if line == "" {
		return false
	}
	n := utf8.RuneCountInString(line)
	if n > 4*maxBoilerRunes {
		return false // a paragraph: not lower-cased for nothing
	}
	lower := strings.ToLower(line)
	if n > maxBoilerRunes {
		// Copyright notices, cookie notes and paywall notes run longer.
		return strings.HasPrefix(lower, "©") || strings.HasPrefix(lower, "copyright") ||
			strings.Contains(lower, "cookie") && containsAny(lower, cookieNotes) || containsAny(lower, postMeta) ||
			n <= 2*maxBoilerRunes && hasAnyPrefix(lower, paywallNotes) || containsAny(lower, followNotes)
	}
	r, _ := utf8.DecodeRuneInString(lower)
	for _, p := range boilerPrefixes[string(r)] {
		if !strings.HasPrefix(lower, p) {
			continue
		}
		rest := lower[len(p):]
		if rest == "" {
			return true
		}
		next, _ := utf8.DecodeRuneInString(rest)
		if cjkRune(p) {
			// Chinese has no word boundary: a label needs its colon
			// ("来源：新华社"), a sentence may start with the same word.
			if strings.ContainsRune(":：| 　", next) {
				return true
			}
			continue
		}
		if unicode.IsLetter(next) || unicode.IsDigit(next) || next == '(' {
			continue // "tags" in "tagsüber", "von" in "vonseiten", print(x)
		}
		if bylineWord(p) && !shortByline(rest) {
			continue // "By the time we arrived, ..." is a sentence
		}
		return true
	}
	return dateLine(lower) || creditLine(lower) || teaserEnd(lower) || containsAny(lower, followNotes) || promoLine(line)
}

// ctaVerbs start the call to action in a bracket of a Chinese promo line:
// click, look, enter, act now, scan, download, read the original.
var ctaVerbs = []string{"点击", "点此", "点我", "查看", "进入", "立即", "马上", "扫码", "下载", "猛戳", "戳这里", "阅读原文", "阅读全文",
	"點擊", "點此", "進入", "馬上", "掃碼", "下載", "閱讀原文", "閱讀全文"}

// promoLine reports whether a short line holds a bracketed call to action,
// as in "…评选火热进行中！【点击投票】Pick你心目中的商业领袖" or "【查看详情】": a
// promotion, not the article's text. The bracket is short and starts with
// a verb of clicking, looking or entering; a bracketed label of the
// article ("【编者按】", "【环球网报道】") is none.
func promoLine(line string) bool {
	const open, close = "【", "】"
	for rest := line; ; {
		i := strings.Index(rest, open)
		if i < 0 {
			return false
		}
		rest = rest[i+len(open):]
		j := strings.Index(rest, close)
		if j < 0 {
			return false
		}
		if in := strings.TrimSpace(rest[:j]); utf8.RuneCountInString(in) <= 8 && hasAnyPrefix(in, ctaVerbs) {
			return true
		}
		rest = rest[j+len(close):]
	}
}

// followNotes are the words of a "follow us" note, inside a line or a
// short paragraph ("Subscribe to our newsletter and follow us on
// Facebook", an author's "You can keep up with me on Twitter"). A
// sentence about someone else's followers says "follow him", not "us".
var followNotes = []string{"follow us on", "follow me on", "keep up with me on", "keep up with us on", "folgen sie uns auf", "folgt uns auf", "folge uns auf", "folge mir auf", "suivez-nous sur", "suivez-moi sur", "síguenos en", "siga-nos no", "siga-nos nas", "seguici su", "obserwuj nas na", "подписывайтесь на нас"}

// paywallNotes start a paywall's notice, which may run to two sentences
// ("To view the full story, please subscribe to The Times. You can
// choose ..."); no article sentence starts so.
var paywallNotes = []string{"to view the full story", "to continue reading", "if you're seeing this message", "if you’re seeing this message", "already a subscriber", "pour lire la suite de cet article", "möchten sie weiterlesen", "para seguir leyendo", "para continuar leyendo"}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// teaserEnds are the words rxTeaserEnd ends with; the regexp runs only
// on lines ending with one of them.
var teaserEnds = []string{"mehr", "more", "weiterlesen", "suite", "más", "mais", "więcej", "подробнее"}

func teaserEnd(lower string) bool {
	tail := strings.TrimRight(lower, " ]•›»>")
	for _, w := range teaserEnds {
		if strings.HasSuffix(tail, w) {
			return rxTeaserEnd.MatchString(lower)
		}
	}
	return false
}

// creditMarks inside a short line make it a photo credit or caption
// ("Marco Odermatt, Ski-Star. © AFP", "Son tres los periodos. Foto: Andina").
var creditMarks = []string{"©", "foto:", "photo:", "fotos:", "photos:", "bild:", "credit:", "crédit", "crédito:", "(foto", "(photo", "getty images", "shutterstock", "istockphoto", "wenn.com", "/dpa", "/ dpa", "imago images"}

func creditLine(lower string) bool {
	return len(lower) <= 2*maxBoilerRunes && (containsAny(lower, creditMarks) ||
		strings.Contains(lower, "cookie") && containsAny(lower, cookieNotes) ||
		containsAny(lower, downloadNotes) || hasDigit(lower) && containsAny(lower, fileTypes) && rxFileSize.MatchString(lower))
}

// postMeta are the words of a blog engine's "this entry was posted"
// paragraph, which runs long.
var postMeta = []string{"filed under", "abgelegt unter", "veröffentlicht und wurde unter", "kommentare zu diesem eintrag", "you can follow any responses", "both comments and pings", "rss 2.0 feed", "trackback-url", "trackback url"}

// downloadNotes and rxFileSize find download labels: "Als PDF
// herunterladen", "Informationsschreiben PDF | 38 KB".
var (
	fileTypes     = []string{"pdf", "doc", "xls", "ppt", "zip"}
	downloadNotes = []string{"als pdf herunterladen", "pdf herunterladen", "download as pdf", "download pdf", "télécharger le pdf", "descargar pdf"}
	rxFileSize    = regexp.MustCompile(`\b(?:pdf|docx?|xlsx?|pptx?|zip)\b.{0,12}\b\d+(?:[.,]\d+)?\s*(?:kb|mb|ko|mo)\b`)
)

// cookieNotes are the words of a cookie banner in running text; each
// has "cookie" in it.
var cookieNotes = []string{"verwendung von cookies", "use of cookies", "uses cookies", "use cookies", "utilise des cookies", "utilisation des cookies", "utiliza cookies", "uso de cookies", "używa plików cookie", "nutzung von cookies", "cookies zu", "使用cookie"}

// rxTeaserEnd matches a teaser cut off by a "more" link:
// "Auskunft über vergangenes Wetter… mehr •••", "Lesen [more]".
var rxTeaserEnd = regexp.MustCompile(`(?:…|\.\.\.|\[)\s*(?:mehr|more|read more|weiterlesen|lire la suite|leer más|leia mais|więcej|подробнее)\s*[\]•›»>]*$`)

// cjkRune reports whether p starts with a Han character: Chinese phrases
// have no word boundary after them.
func cjkRune(p string) bool {
	r, _ := utf8.DecodeRuneInString(p)
	return unicode.Is(unicode.Han, r)
}

// bylineWord is a prefix that also starts ordinary sentences; it marks a
// byline only when a short name follows.
func bylineWord(p string) bool {
	switch p {
	case "kontakt", "contact", "quellen", "autoren", "abbildung", "veröffentlichung", "von", "by", "par", "por", "autor", "auteur", "author", "автор", "stand", "foto", "photo", "bild", "image", "images", "picture", "dpa", "reuters", "afp", "imago", "print", "share", "tweet", "related", "comment", "comments", "rating", "cookie", "cookies":
		return true
	}
	return false
}

// shortByline reports whether rest (what follows "By", "Foto", ...) is a
// few words rather than a sentence: at most six words and no full stop
// inside.
func shortByline(rest string) bool {
	rest = strings.TrimSpace(rest)
	if strings.HasPrefix(rest, ":") || strings.HasPrefix(rest, "|") || strings.HasPrefix(rest, "/") {
		return true
	}
	words := strings.Fields(rest)
	if len(words) > 6 {
		return false
	}
	s := strings.TrimRight(rest, ".!")
	return !strings.ContainsAny(s, ".!?;")
}

// dateWords are weekday and month names and the small words of a written
// date ("segunda-feira, 22 de janeiro de 2018", "Dienstag, 6. Mai 2014").
var dateWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`
		monday tuesday wednesday thursday friday saturday sunday mon tue wed thu fri sat sun
		january february march april may june july august september october november december
		jan feb mar apr jun jul aug sep sept oct nov dec
		montag dienstag mittwoch donnerstag freitag samstag sonntag
		januar jänner februar märz juni juli oktober dezember mai
		lundi mardi mercredi jeudi vendredi samedi dimanche
		janvier février mars avril juin juillet août septembre octobre novembre décembre
		lunes martes miércoles jueves viernes sábado domingo
		enero febrero marzo abril mayo junio julio agosto septiembre setiembre octubre noviembre diciembre
		segunda-feira terça-feira quarta-feira quinta-feira sexta-feira segunda terça quarta quinta sexta feira
		janeiro fevereiro março maio junho julho setembro outubro novembro dezembro
		poniedziałek wtorek środa czwartek piątek sobota niedziela
		stycznia lutego marca kwietnia maja czerwca lipca sierpnia września października listopada grudnia
		lunedì martedì mercoledì giovedì venerdì gennaio febbraio aprile maggio giugno luglio settembre ottobre dicembre
		января февраля марта апреля мая июня июля августа сентября октября ноября декабря
		понедельник вторник среда четверг пятница суббота воскресенье
		de del el le la am um at on of the der den à às h uhr et and y e i
		updated published posted aktualisiert veröffentlicht erstellt publié publicado`) {
		dateWords[w] = true
	}
}

// dateLine reports whether a lower-cased short line is only a date: a
// weekday or month name, digits, and the small words of a written date.
func dateLine(lower string) bool {
	if len(lower) > 3*60 || !hasDigit(lower) || utf8.RuneCountInString(lower) > 60 {
		return false
	}
	named, digits := false, false
	for _, w := range strings.FieldsFunc(lower, func(r rune) bool {
		return unicode.IsSpace(r) || r == ',' || r == '.' || r == '/' || r == '|' || r == ':' || r == '(' || r == ')'
	}) {
		switch {
		case strings.IndexFunc(w, func(r rune) bool { return !unicode.IsDigit(r) }) < 0:
			digits = true
		case dateWords[w]:
			if len(w) > 3 {
				named = true
			}
		default:
			return false
		}
	}
	return named && digits
}

// Related blocks. A "related" heading is followed by the headlines it
// introduces, each a short line of its own; when the links are gone
// (script-opened teasers) or were never marked, the headlines still
// survive the markup cleaning, and they differ between two sites running
// one story. A line that is only such a heading ("相关内容", "Lesen Sie
// auch:", "APP精彩推荐") drops the run of short lines after it, up to the
// first line that reads as prose.

// relatedHeads are the relatedPhrases that head a block of headlines;
// notHeads are those that are rather a "continue reading" link or head
// information of the article's own ("weitere Informationen").
var relatedHeads = map[string]bool{}

const notHeads = `read more|lire la suite|weiterlesen|zum weiterlesen|leer más|leia mais|czytaj więcej|читать далее|lesen sie mehr|lade weitere|mira lo que tiene|saiba mais|más información|plus d'infos|weitere informationen|weitere infos|noch mehr infos|mehr zu|mehr von|mehr aus|empfehlungen|entdecken sie jetzt`

// hanHeads are the Chinese related phrases, which also head a block after
// a few characters of their own ("APP精彩推荐", "本周热门推荐").
var hanHeads []string

// relatedFirst are the first letters of relatedHeads.
var relatedFirst = map[rune]bool{}

func init() {
	skip := map[string]bool{}
	for _, p := range strings.Split(notHeads, "|") {
		skip[p] = true
	}
	for _, p := range strings.FieldsFunc(relatedPhrases, func(r rune) bool { return r == '|' || r == '\n' || r == '\t' }) {
		if skip[p] {
			continue
		}
		relatedHeads[p] = true
		r, _ := utf8.DecodeRuneInString(p)
		relatedFirst[r] = true
		if cjkRune(p) {
			hanHeads = append(hanHeads, p)
		}
	}
}

// maxHanHeadRunes is the length up to which a line ending with a Chinese
// related phrase is a heading.
const maxHanHeadRunes = 12

// relatedHead reports whether line is only a "related" heading. It runs
// on every line: the map is consulted only for lines whose first letter
// starts some heading, the Chinese phrases only for lines ending in Han.
func relatedHead(line string) bool {
	if len(line) > 120 {
		return false // a sentence: not trimmed for nothing
	}
	line = strings.Trim(line, " \t-–—•·|»>*#:：»›+")
	if line == "" || len(line) > 80 {
		return false
	}
	r, _ := utf8.DecodeRuneInString(line)
	if relatedFirst[unicode.ToLower(r)] && relatedHeads[strings.ToLower(line)] {
		return true
	}
	last, _ := utf8.DecodeLastRuneInString(line)
	if !unicode.Is(unicode.Han, last) || utf8.RuneCountInString(line) > maxHanHeadRunes {
		return false
	}
	for _, p := range hanHeads {
		if strings.HasSuffix(line, p) {
			return true
		}
	}
	return false
}

// maxHeadlineRunes and maxHanHeadlineRunes are the lengths above which a
// line is not a headline in a related block.
const (
	maxHeadlineRunes    = 100
	maxHanHeadlineRunes = 40
)

// headlineLine reports whether line could be a headline of a related
// block: short, and not a sentence ending with a full stop.
func headlineLine(line string) bool {
	line = strings.TrimSpace(line)
	if line == "" {
		return true
	}
	n := utf8.RuneCountInString(line)
	if n > maxHeadlineRunes {
		return false
	}
	han := 0
	for _, r := range line {
		if unicode.Is(unicode.Han, r) {
			han++
		}
	}
	if 2*han > n && n > maxHanHeadlineRunes {
		return false
	}
	return !strings.HasSuffix(line, ".") && !strings.HasSuffix(line, "。")
}

// dropBoilerLines removes boilerplate lines from rendered text, and the
// headlines under a related heading. When every line would go, the text
// is kept as it is: a page with text never yields none.
func dropBoilerLines(text string) string {
	var b strings.Builder
	kept := false
	emit := func(line string) {
		if boilerLine(line) {
			return
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(line)
		kept = kept || strings.TrimSpace(line) != ""
	}
	// related: in the headlines under a related heading; last: the last
	// of them, which is the heading of the next section when prose
	// follows it (a "See also" whose links the cleaning removed, then
	// "Footnotes").
	related, last := false, ""
	for line := range strings.SplitSeq(text, "\n") {
		if relatedHead(line) {
			related, last = true, ""
			continue
		}
		if related && headlineLine(line) {
			if strings.TrimSpace(line) != "" {
				last = line
			}
			continue
		}
		if related && last != "" {
			emit(last)
		}
		related, last = false, ""
		emit(line)
	}
	if !kept {
		return text
	}
	return b.String()
}
