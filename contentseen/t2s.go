package contentseen

import (
	"unicode/utf8"

	"github.com/simcrawl/simcrawl/contentseen/internal/zhdict"
)

// Traditional to Simplified Chinese.
//
// The same article in Traditional and in Simplified script should be a
// copy, so tokenizer version 2 converts every Han run to Simplified before
// segmenting it, with OpenCC's "t2s" conversion (its TSPhrases and
// TSCharacters dictionaries) as github.com/longbridgeapp/opencc loads and
// applies it: at each position the longest phrase of at most 10
// characters that TSPhrases has, else the longest entry of
// TSCharacters, else the character itself, each replaced by its first
// value. The tables are taken from the library at `go generate` time into
// zhdict.bin, so the crawler does not carry the library (whose package
// registers a command-line flag) or its per-character allocations;
// TestT2SMatchesOpenCC checks that this gives the library's output on the
// fixtures and the corpus, in both scripts.

// t2sMaxRunes is the library's window: keys longer than this never match.
const t2sMaxRunes = 10

// t2sConverter holds OpenCC's t2s tables. Read-only after loading, so
// safe for concurrent use.
type t2sConverter struct {
	tables []t2sTable
	// starts has bit r set when some key starts with rune r: a run with
	// no such rune is its own conversion.
	starts []uint64
}

type t2sTable struct {
	m        map[string]string
	maxRunes int
}

func newT2SConverter(tables [][]zhdict.Pair) *t2sConverter {
	c := &t2sConverter{}
	for _, pairs := range tables {
		t := t2sTable{m: make(map[string]string, len(pairs))}
		for _, p := range pairs {
			if p.From == "" {
				continue
			}
			t.m[p.From] = p.To
			t.maxRunes = max(t.maxRunes, utf8.RuneCountInString(p.From))
			r, _ := utf8.DecodeRuneInString(p.From)
			for int(r)/64 >= len(c.starts) {
				c.starts = append(c.starts, 0)
			}
			c.starts[r/64] |= 1 << (r % 64)
		}
		t.maxRunes = min(t.maxRunes, t2sMaxRunes)
		c.tables = append(c.tables, t)
	}
	return c
}

func (c *t2sConverter) starting(r rune) bool {
	return int(r)/64 < len(c.starts) && c.starts[r/64]&(1<<(r%64)) != 0
}

// convert returns run in Simplified script, and buf for reuse: run itself
// when nothing changes, else a view of buf (valid until buf is written
// again). offs is scratch space.
func (c *t2sConverter) convert(run string, buf []byte, offs *[]int32) (string, []byte) {
	found := false
	for _, r := range run {
		if c.starting(r) {
			found = true
			break
		}
	}
	if !found {
		return run, buf
	}
	o := (*offs)[:0]
	for i := range run {
		o = append(o, int32(i))
	}
	o = append(o, int32(len(run)))
	*offs = o
	n := len(o) - 1
	out := buf[:0]
	for i := 0; i < n; {
		piece := run[o[i]:o[i+1]]
		r, _ := utf8.DecodeRuneInString(piece)
		l := 1
		if c.starting(r) {
		tables:
			for _, t := range c.tables {
				for m := min(t.maxRunes, n-i); m >= 1; m-- {
					if v, ok := t.m[run[o[i]:o[i+m]]]; ok {
						piece, l = v, m
						break tables
					}
				}
			}
		}
		out = append(out, piece...)
		i += l
	}
	if string(out) == run {
		return run, out
	}
	return bytesView(out), out
}
