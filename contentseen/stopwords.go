package contentseen

// Stop words are dropped before features are built: they occur in every
// text, so as features they only pull all fingerprints towards one another.
// The lists are short on purpose (function words only, no content words)
// and in code, so that a fingerprint never depends on a file a deployment
// might change. Changing them changes fingerprints: treat them like
// HashFeature, frozen once indexes exist.

// englishStopWords are lower-case English function words, after
// normalisation (so "don't" is listed with an ASCII apostrophe).
var englishStopWords = []string{
	"a", "about", "after", "all", "also", "am", "an", "and", "any", "are",
	"as", "at", "be", "because", "been", "before", "but", "by", "can",
	"could", "did", "do", "does", "don't", "for", "from", "had", "has",
	"have", "he", "her", "hers", "him", "his", "how", "i", "if", "in",
	"into", "is", "it", "it's", "its", "just", "me", "my", "no", "nor",
	"not", "of", "on", "or", "our", "ours", "out", "over", "she", "should",
	"so", "some", "such", "than", "that", "the", "their", "them", "then",
	"there", "these", "they", "this", "those", "to", "too", "up", "us",
	"very", "was", "we", "were", "what", "when", "where", "which", "while",
	"who", "whom", "why", "will", "with", "would", "you", "your", "yours",
}

// chineseStopWords are Chinese function words (particles, pronouns,
// conjunctions, prepositions) in Simplified and, where the form differs,
// Traditional script, as the segmenter emits them.
var chineseStopWords = []string{
	"的", "地", "得", "了", "着", "著", "过", "過", "是", "在", "和", "与",
	"與", "及", "或", "而", "也", "都", "就", "又", "还", "還", "很", "把",
	"被", "将", "將", "对", "對", "于", "於", "以", "之", "其", "这", "這",
	"那", "这个", "這個", "那个", "那個", "一个", "一個", "我", "你", "他",
	"她", "它", "我们", "我們", "你们", "你們", "他们", "他們", "她们",
	"她們", "它们", "它們", "吗", "嗎", "呢", "吧", "啊", "呀", "所", "为",
	"為", "从", "從", "向", "到", "等", "但", "但是", "因为", "因為", "所以",
	"如果", "虽然", "雖然", "并", "並", "并且", "並且", "而且", "即", "则",
	"則", "该", "該", "此",
}

// stopSet holds the HashFeature of every stop word in an open-addressing
// table of 512 slots (0 = empty), so that the check reuses the token hash
// the features need anyway; a hash hit is confirmed by comparing the text.
// Built once; read-only afterwards and so safe for concurrent use.
var stopSet = func() (t struct {
	hashes [512]uint64
	words  [512]string
}) {
	for _, list := range [][]string{englishStopWords, chineseStopWords} {
		for _, w := range list {
			h := HashFeature(w)
			i := h & 511
			for t.hashes[i] != 0 && t.words[i] != w {
				i = (i + 1) & 511
			}
			t.hashes[i], t.words[i] = h, w
		}
	}
	return t
}()

// maxStopWordLen is the byte length of the longest stop word: longer
// tokens skip the look-up.
var maxStopWordLen = func() int {
	n := 0
	for _, list := range [][]string{englishStopWords, chineseStopWords} {
		for _, w := range list {
			n = max(n, len(w))
		}
	}
	return n
}()

// isStopWord reports whether the token b, whose HashFeature is h, is a
// stop word.
func isStopWord(b []byte, h uint64) bool {
	if len(b) > maxStopWordLen {
		return false
	}
	for i := h & 511; stopSet.hashes[i] != 0; i = (i + 1) & 511 {
		if stopSet.hashes[i] == h && stopSet.words[i] == string(b) {
			return true
		}
	}
	return false
}
