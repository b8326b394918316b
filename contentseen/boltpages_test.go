package contentseen

import (
	"slices"
	"testing"
	"unsafe"
)

func TestReplacedPagesRuns(t *testing.T) {
	mapping := make([]byte, 16*4096)
	base := uintptr(unsafe.Pointer(&mapping[0]))
	r := &replacedPages{base: base, end: base + uintptr(len(mapping)), pageSize: 4096}
	r.note(mapping[5*4096+100 : 5*4096+200]) // page 5
	r.note(mapping[3*4096 : 3*4096+10])      // page 3
	r.note(mapping[4*4096+4000 : 6*4096+1])  // pages 4..6
	r.note(mapping[10*4096 : 10*4096+4096])  // page 10 exactly
	r.note(mapping[5*4096 : 5*4096+1])       // page 5 again
	r.note(make([]byte, 100))                // outside the mapping
	r.note(nil)
	want := [][2]uint64{{3, 4}, {10, 1}}
	if got := r.runs(); !slices.Equal(got, want) {
		t.Errorf("runs = %v, want %v", got, want)
	}
	var none *replacedPages
	none.note(mapping[:1]) // a nil recorder records nothing, without panicking
}
