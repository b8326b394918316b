package contentseen

import (
	"slices"
	"testing"
)

func TestOnlyIn(t *testing.T) {
	a := []Feature{{"river", 3}, {"bridge", 2}, {"mill", 1.5}, {"ad", 1}}
	b := []Feature{{"bridge", 4}, {"river", 1}}
	if got, want := OnlyIn(a, b, 1), []Feature{{"mill", 1.5}}; !slices.Equal(got, want) {
		t.Errorf("OnlyIn(a, b, 1) = %v, want %v", got, want)
	}
	if got, want := OnlyIn(a, b, 10), []Feature{{"mill", 1.5}, {"ad", 1}}; !slices.Equal(got, want) {
		t.Errorf("OnlyIn(a, b, 10) = %v, want %v", got, want)
	}
	if got := OnlyIn(b, a, 10); len(got) != 0 {
		t.Errorf("OnlyIn(b, a, 10) = %v, want none", got)
	}
}
