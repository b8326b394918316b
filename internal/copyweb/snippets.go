package copyweb

// Boilerplate written for this dataset, in the languages the corpus has
// most of. Every string here is our own.
type snippets struct {
	adLabel   string
	ads       []string
	views     string // fmt verb %d: a view count
	updated   []string
	comments  string // heading, fmt verb %d
	people    []string
	remarks   []string
	leave     string
	moderated string
	related   string
	repost    string // fmt verb %s: the original's URL
	reposted  string // appended to a reposted page's title ("" = none)
	headlines []string
	nav       []string
	footer    string
}

var snippetSets = map[string]*snippets{
	"en": {
		adLabel: "Advertisement",
		ads: []string{
			"Save 30% on noise-cancelling headphones this week only. Shop the sale now.",
			"Refinance today: rates from 4.9% APR. Check your offer in two minutes.",
			"Try our meal kits free for a week. Fresh ingredients delivered to your door.",
			"Learn a language in 10 minutes a day. Download the app and start free.",
		},
		views:     "%d views",
		updated:   []string{"Updated Tuesday, 3 March 2026, 14:05", "Published 2 hours ago", "Last modified: 11/02/2026 08:41", "Posted on January 22, 2018 at 9:30 am"},
		comments:  "Comments (%d)",
		people:    []string{"riverfan42", "Maggie T.", "old_salt", "J. Okafor", "quietreader"},
		remarks:   []string{"Great piece, thanks for writing it up.", "I disagree with the second half, but well argued.", "Does anyone have a link to the full report?", "This is exactly what happened in our town too.", "First!"},
		leave:     "Leave a comment. Your email address will not be published. Required fields are marked *",
		moderated: "Comments are moderated and may take up to 24 hours to appear. Please keep the discussion civil.",
		related:   "Related stories",
		repost:    "Originally published at %s. Republished with permission.",
		headlines: []string{"What Nobody Tells You About This Story", "The Quiet Shift Everyone Missed", "Here Is Why It Matters Now", "A Closer Look at the Numbers", "Five Takeaways You Should Know", "The Story Behind the Headlines"},
		nav:       []string{"Home", "World", "Business", "Technology", "Culture", "Opinion", "Subscribe"},
		footer:    "© 2026 Northbank Media Group. All rights reserved. Privacy policy · Terms of use · Contact us · Advertise with us",
	},
	"zh": {
		adLabel: "广告",
		ads: []string{
			"限时优惠：降噪耳机全场七折，仅限本周，立即抢购！",
			"房贷利率低至3.9%，两分钟在线测算您的额度。",
			"新用户免费试用一周营养餐，新鲜食材送货上门。",
			"每天十分钟轻松学外语，下载应用即可免费开始。",
		},
		views:     "阅读 %d",
		updated:   []string{"2026-03-03 14:05 来源：本站综合", "发布时间：2026年3月3日 星期二", "更新于 2小时前", "2018年01月22日 09:30"},
		comments:  "网友评论（%d）",
		people:    []string{"江边的风", "用户8812", "老张", "小鱼儿", "路过的网友"},
		remarks:   []string{"写得很好，支持一下。", "后半部分不太认同，但观点清楚。", "有没有完整报告的链接？", "我们那里也是这样。", "沙发！"},
		leave:     "发表评论：请文明上网，理性发言，您的邮箱不会被公开。",
		moderated: "评论经审核后显示，本站不代表网友观点。",
		related:   "相关阅读",
		repost:    "本文转载自其他网站，原文链接：%s，版权归原作者所有。",
		reposted:  " - 转载",
		headlines: []string{"一文读懂这件事的来龙去脉", "大家都忽略了的关键变化", "为什么这件事现在很重要", "数字背后的真实情况", "关于此事你需要知道的五点", "头条背后的故事"},
		nav:       []string{"首页", "国内", "国际", "财经", "科技", "文化", "评论"},
		footer:    "© 2026 北岸传媒 版权所有 未经授权禁止转载 联系我们 广告服务 隐私政策",
	},
	"de": {
		adLabel: "Anzeige",
		ads: []string{
			"Jetzt 30 % sparen auf Kopfhörer mit Geräuschunterdrückung. Nur diese Woche.",
			"Kredit vergleichen: Zinsen ab 4,9 % effektiv. In zwei Minuten zum Angebot.",
		},
		views:     "%d Aufrufe",
		updated:   []string{"Aktualisiert am Dienstag, 3. März 2026, 14:05 Uhr", "Veröffentlicht vor 2 Stunden"},
		comments:  "Kommentare (%d)",
		people:    []string{"Flussblick", "Maria K.", "alterSeebaer"},
		remarks:   []string{"Sehr guter Artikel, danke.", "Den zweiten Teil sehe ich anders.", "Gibt es den Bericht irgendwo vollständig?"},
		leave:     "Schreiben Sie einen Kommentar. Ihre E-Mail-Adresse wird nicht veröffentlicht.",
		moderated: "Kommentare werden vor der Freischaltung geprüft. Bitte bleiben Sie sachlich.",
		related:   "Das könnte Sie auch interessieren",
		repost:    "Zuerst erschienen auf %s. Nachdruck mit freundlicher Genehmigung.",
		headlines: []string{"Was niemand über diese Geschichte erzählt", "Ein genauerer Blick auf die Zahlen", "Darum ist es jetzt wichtig"},
		nav:       []string{"Startseite", "Politik", "Wirtschaft", "Kultur", "Sport", "Meinung"},
		footer:    "© 2026 Nordufer Medien GmbH. Alle Rechte vorbehalten. Impressum · Datenschutz · Kontakt",
	},
	"fr": {
		adLabel: "Publicité",
		ads: []string{
			"Économisez 30 % sur les casques à réduction de bruit, cette semaine seulement.",
			"Crédit immobilier : taux dès 3,9 %. Simulez votre prêt en deux minutes.",
		},
		views:     "%d vues",
		updated:   []string{"Mis à jour le mardi 3 mars 2026 à 14h05", "Publié il y a 2 heures"},
		comments:  "Commentaires (%d)",
		people:    []string{"rivegauche", "Claire D.", "vieux_loup"},
		remarks:   []string{"Excellent article, merci.", "Je ne suis pas d'accord avec la seconde partie.", "Quelqu'un a le lien vers le rapport complet ?"},
		leave:     "Laisser un commentaire. Votre adresse e-mail ne sera pas publiée.",
		moderated: "Les commentaires sont modérés avant publication. Merci de rester courtois.",
		related:   "À lire aussi",
		repost:    "Publié initialement sur %s. Reproduit avec autorisation.",
		headlines: []string{"Ce que personne ne dit sur cette affaire", "Un regard plus précis sur les chiffres", "Pourquoi c'est important maintenant"},
		nav:       []string{"Accueil", "Monde", "Économie", "Culture", "Sport", "Opinions"},
		footer:    "© 2026 Rive Nord Médias. Tous droits réservés. Mentions légales · Confidentialité · Contact",
	},
}

// fillerWords replace words in edited and rewritten copies of pages in
// languages written with spaces, fillerHan characters in Chinese: words a
// rewrite brings in that the article did not have.
var fillerWords = []string{"notably", "indeed", "recently", "largely", "several", "new", "local", "major", "early", "later",
	"still", "also", "often", "nearly", "about", "around", "other", "certain", "public", "official", "meanwhile", "instead",
	"according", "sources", "residents", "officials", "plans", "reported", "confirmed", "expected", "week", "month", "region",
	"district", "company", "agency", "board", "review", "decision", "question", "answer", "result", "figure", "share",
	"growth", "decline", "support", "concern", "debate", "proposal", "measure", "effort", "challenge", "change", "future",
	"history", "season", "market", "price", "service", "project"}

var fillerHan = []rune("据悉此外近日目前相关方面表示认为进一步加强推动发展工作情况问题记者了解到部门负责人介绍今年以来全面持续有效落实措施同时继续积极稳步提升")
