package zhdict

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	d := &Data{
		Words: []Word{{"中国人", 12.5}, {"中国", 9.25}, {"人", 7}, {"中", 9.25}, {"國家", 15}},
		Tables: [][]Pair{
			{{"乾淨", "干净"}, {"乾隆", "乾隆"}},
			{{"國", "国"}, {"家", "家"}},
		},
	}
	b, err := Encode(d)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []Word{{"中", 9.25}, {"中国", 9.25}, {"中国人", 12.5}, {"人", 7}, {"國家", 15}} // sorted
	if !reflect.DeepEqual(got.Words, want) || !reflect.DeepEqual(got.Tables, d.Tables) {
		t.Errorf("Decode(Encode(d)) = %+v, want words %+v and the tables", got, want)
	}
	r, err := NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var shared []int
	for {
		_, s, _, ok, err := r.NextWord()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		shared = append(shared, s)
	}
	// Bytes shared with the word before, not runes: 人 (e4 ba ba) shares
	// its first byte with 中 (e4 b8 ad), which begins 中国人 before it.
	if want := []int{0, 3, 6, 1, 0}; !reflect.DeepEqual(shared, want) {
		t.Errorf("shared prefixes %v, want %v", shared, want)
	}
}

func TestEncodeRejects(t *testing.T) {
	for _, d := range []*Data{
		{Words: []Word{{"中", 1}, {"中", 2}}},
		{Words: []Word{{"", 1}}},
		{Words: []Word{{"中", 0}}},
	} {
		if _, err := Encode(d); err == nil {
			t.Errorf("Encode(%+v) succeeded, want an error", d.Words)
		}
	}
}

func TestDecodeCorrupt(t *testing.T) {
	b, err := Encode(&Data{Words: []Word{{"中国", 3}, {"人", 2}}})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"empty":     {},
		"truncated": b[:len(b)/2],
		"garbage":   []byte("not a dictionary at all"),
	} {
		if _, err := Decode(data); err == nil {
			t.Errorf("%s: Decode succeeded, want an error", name)
		} else if name == "garbage" && !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: error %v does not wrap ErrCorrupt", name, err)
		}
	}
}
