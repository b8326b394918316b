package worddiff

import (
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	tests := []struct {
		name, a, b, want string
	}{
		{"same", "the cat sat", "the cat sat", "the cat sat"},
		{"word changed", "the cat sat on the mat", "the dog sat on the mat", "the [-cat-]{+dog+} sat on the mat"},
		{"line added", "Story text here.\nMore text.", "Story text here.\nAdvertisement: buy now\nMore text.", "Story text here.\n{+Advertisement: buy now+}\nMore text."},
		{"timestamp", "Updated 10:32 today", "Updated 11:05 today", "Updated [-10-]{+11+}:[-32-]{+05+} today"},
		{"chinese", "山区茶园开放", "山区茶馆开放", "山区茶[-园-]{+馆+}开放"},
		{"empty", "", "new words", "{+new words+}"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			Write(&b, Diff(tc.a, tc.b), false)
			if got := strings.TrimSuffix(b.String(), "\n"); got != tc.want {
				t.Errorf("Diff(%q, %q) = %q, want %q", tc.a, tc.b, got, tc.want)
			}
		})
	}
}

// TestDiffLarge checks that texts too long for one LCS table are
// still diffed (paragraph first) and reassemble both sides exactly.
func TestDiffLarge(t *testing.T) {
	var a, b strings.Builder
	for i := range 600 {
		p := "paragraph " + strings.Repeat("word ", 8) + string(rune('a'+i%26)) + "\n"
		a.WriteString(p)
		if i%100 == 7 {
			b.WriteString("inserted advertisement line\n")
		}
		b.WriteString(p)
	}
	runs := Diff(a.String(), b.String())
	var left, right strings.Builder
	for _, r := range runs {
		s := strings.Join(r.Toks, "")
		if r.Kind != Ins {
			left.WriteString(s)
		}
		if r.Kind != Del {
			right.WriteString(s)
		}
	}
	if left.String() != a.String() || right.String() != b.String() {
		t.Fatal("diff runs do not reassemble the texts")
	}
	_, del, ins := Words(runs)
	if del != 0 || ins != 3*6 {
		t.Errorf("diff of a text with 6 inserted lines: %d words removed, %d added; want 0 and 18", del, ins)
	}
}

func TestWriteColour(t *testing.T) {
	var b strings.Builder
	Write(&b, Diff("seen 10 times", "seen 12 times"), true)
	if want := "seen " + ANSIRed + "10" + ANSIReset + ANSIGreen + "12" + ANSIReset + " times\n"; b.String() != want {
		t.Errorf("coloured diff = %q, want %q", b.String(), want)
	}
}
