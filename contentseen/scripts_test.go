package contentseen

import (
	"slices"
	"testing"
	"unicode"
	"unicode/utf8"
)

// Invented texts in scripts written without spaces.
const (
	japaneseArticle = `市の図書館は来月から開館時間を延長すると発表しました。平日は午後九時まで、土曜日と日曜日は午後七時まで利用できるようになります。図書館によると、仕事や学校の帰りに立ち寄りたいという声が多く寄せられていたということです。また、新しく子ども向けの読み聞かせの会を毎週開くほか、電子書籍の貸し出しサービスも始める予定です。担当者は、より多くの市民に気軽に本に親しんでもらいたいと話しています。駅前の分館でも同じように時間を延ばすかどうか、利用者の意見を聞きながら検討するとしています。`
	japaneseKana    = `きょうはあさからあめがふっていたので、わたしはいえでほんをよんですごしました。ひるごはんのあと、おとうとといっしょにおかしをつくりました。たまごとさとうとこむぎこをまぜて、オーブンでやくと、いいにおいがへやじゅうにひろがりました。ゆうがたになるとあめがやんで、そらがすこしあかるくなりました。あしたはともだちとこうえんであそぶやくそくをしているので、はれるといいなとおもいます。`
	thaiArticle     = `เทศบาลเมืองประกาศว่าห้องสมุดประชาชนจะขยายเวลาเปิดให้บริการตั้งแต่เดือนหน้า ในวันธรรมดาจะเปิดจนถึงสามทุ่ม และในวันเสาร์อาทิตย์จะเปิดจนถึงหนึ่งทุ่ม เจ้าหน้าที่กล่าวว่ามีผู้ใช้บริการจำนวนมากต้องการแวะมาหลังเลิกงานหรือหลังเลิกเรียน นอกจากนี้ห้องสมุดยังจะจัดกิจกรรมเล่านิทานสำหรับเด็กทุกสัปดาห์ และเริ่มให้บริการยืมหนังสืออิเล็กทรอนิกส์อีกด้วย ผู้อำนวยการกล่าวว่าอยากให้ประชาชนเข้าถึงหนังสือได้ง่ายขึ้น`
)

// oneCharEdits returns copies of text with one rune replaced, at every
// step-th rune that isBigramScript accepts and is no mark.
func oneCharEdits(text string, step int, with rune) []string {
	var out []string
	i := 0
	for off, r := range text {
		if !isBigramScript(r) || unicode.IsMark(r) || r == with {
			continue
		}
		if i++; i%step == 0 {
			out = append(out, text[:off]+string(with)+text[off+utf8.RuneLen(r):])
		}
	}
	return out
}

// A one-character edit inside a run of kana or Thai changes a few
// character bigrams, not a whole run: the fingerprint stays within a few
// bits. Tokenizer 1 is shown for comparison (logged, not asserted).
func TestScriptsOneCharEditStaysNear(t *testing.T) {
	for _, tt := range []struct {
		name string
		text string
		with rune
	}{
		{"japanese", japaneseArticle, 'を'},
		{"japanese kana", japaneseKana, 'を'},
		{"thai", thaiArticle, 'ก'},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v2 := mustFingerprinter(t, Options{})
			v1 := mustFingerprinter(t, Options{Tokenizer: Tokenizer1})
			base2 := mustFingerprint(t, v2, tt.text)
			base1, n1, err1 := v1.Fingerprint(tt.text)
			_, n2, _ := v2.Fingerprint(tt.text)
			edits := oneCharEdits(tt.text, 7, tt.with)
			if len(edits) < 10 {
				t.Fatalf("only %d edits", len(edits))
			}
			var d1, d2 []int
			for _, e := range edits {
				d2 = append(d2, Distance(base2, mustFingerprint(t, v2, e)))
				if fp, _, err := v1.Fingerprint(e); err == nil && err1 == nil {
					d1 = append(d1, Distance(base1, fp))
				}
			}
			slices.Sort(d1)
			slices.Sort(d2)
			t.Logf("%d one-character edits: tokenizer 2 (%d features) distances %v; tokenizer 1 (%d features, %v) %v", len(edits), n2, d2, n1, err1, d1)
			if median := d2[len(d2)/2]; median > 3 || d2[len(d2)-1] > 6 {
				t.Errorf("tokenizer 2: median distance %d, max %d; want at most 3 and 6", median, d2[len(d2)-1])
			}
		})
	}
}
