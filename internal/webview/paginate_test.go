package webview

import (
	"slices"
	"testing"
)

func TestPageOf(t *testing.T) {
	rows := []int{1, 2, 3, 4, 5}
	for _, tc := range []struct {
		pg, per, page, pages int
		want                 []int
	}{
		{1, 2, 1, 3, []int{1, 2}},
		{3, 2, 3, 3, []int{5}},
		{9, 2, 3, 3, []int{5}},     // past the end: the last page
		{-1, 2, 1, 3, []int{1, 2}}, // before the start: the first
		{1, 10, 1, 1, rows},
	} {
		page, pages, got := pageOf(rows, tc.pg, tc.per)
		if page != tc.page || pages != tc.pages || !slices.Equal(got, tc.want) {
			t.Errorf("pageOf(%v, %d, %d) = %d, %d, %v; want %d, %d, %v", rows, tc.pg, tc.per, page, pages, got, tc.page, tc.pages, tc.want)
		}
	}
	if page, pages, got := pageOf([]int(nil), 1, 20); page != 1 || pages != 1 || len(got) != 0 {
		t.Errorf("pageOf(nil) = %d, %d, %v; want 1, 1, []", page, pages, got)
	}
	if got := filterRows(rows, func(r int) bool { return r%2 == 1 }); !slices.Equal(got, []int{1, 3, 5}) {
		t.Errorf("filterRows(odd) = %v", got)
	}
}
