package contentseen

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-ego/gse"
)

// Chinese word segmentation.
//
// The dictionary is gse's embedded Chinese dictionary, Simplified (s_1.txt)
// and Traditional (t_1.txt) together ("zh"): Simplified alone leaves
// Traditional text in single characters and the reverse, and the
// Traditional list lacks the words both scripts share. Words with a
// dictionary frequency below zhMinFreq are left out. Measured here (2
// shared cores): the full dictionary takes 3.2 s and 204 MB of heap inside
// gse (23 s under -race); with zhMinFreq = 4 gse needs 1.3 s and 91 MB
// (7 s under -race) and word boundaries on the gne-zh corpus agree with the
// full dictionary's at F1 0.96 (recall 0.999: the rare words dropped split
// into common ones).
//
// gse is used once, to load and parse the dictionary; its words and
// frequencies are then copied into a plain map and the gse segmenter is
// dropped, which leaves about 16 MB of heap (135 MB at the peak of loading). Segmentation runs gse's
// own algorithm (the shortest path through the word lattice, a word's
// length being log2(total frequency / its frequency), an unknown character
// costing 32) over that map without allocating, because gse's Segment
// allocates per character and reaches only about 9 MB/s here. Tests check
// that both give the same words.
//
// gse's HMM (for words not in the dictionary) is never used: it is
// quadratic on long non-Chinese text, and the fingerprint needs consistent
// tokens, not linguistically perfect ones.
//
// There is no Traditional-to-Simplified conversion: gse has no character
// mapping, and no small maintained Go library for it was found. A repost
// converted between scripts therefore gets an unrelated fingerprint.

const (
	// zhMinFreq drops dictionary words rarer than this (see above).
	zhMinFreq = 4
	// zhUnknownCost is gse's cost of a character not in the dictionary.
	zhUnknownCost = 32
)

// zhDict is the segmentation dictionary: every word and every proper
// prefix of a word maps to the word's cost; a prefix that is not itself a
// word maps to -1, so a look-up can stop at the first miss. Read-only
// after loading, so safe for concurrent use.
type zhDict struct {
	words   map[string]float32
	nWords  int
	maxRune int
}

// zh holds the one shared dictionary, loaded on first use.
var zh struct {
	once     sync.Once
	dict     *zhDict
	err      error
	loadTime time.Duration

	mu     sync.Mutex // guards loaded
	loaded bool
	// keepGSE, set by tests before loading, keeps the gse segmenter so
	// that they can compare against it.
	keepGSE bool
	gse     *gse.Segmenter
}

// loadChinese returns the shared dictionary, loading it once.
func loadChinese() (*zhDict, error) {
	zh.once.Do(func() {
		start := time.Now()
		zh.dict, zh.err = buildZhDict()
		zh.loadTime = time.Since(start)
		zh.mu.Lock()
		zh.loaded = zh.err == nil
		zh.mu.Unlock()
	})
	return zh.dict, zh.err
}

// PreloadChinese loads the Chinese dictionary now instead of at the first
// Han character a Fingerprinter meets. It costs about 1.3 s and 90 MB of
// transient heap (see ChineseStats), once per process; later calls return
// at once with the same result. A crawler that expects Chinese pages calls
// it at start-up so that the first page does not stall.
func PreloadChinese() error {
	_, err := loadChinese()
	return err
}

// ChineseStats reports whether the Chinese dictionary has been loaded, how
// long loading took and how many words it holds. Safe for concurrent use.
func ChineseStats() (loaded bool, loadTime time.Duration, words int) {
	zh.mu.Lock()
	defer zh.mu.Unlock()
	if !zh.loaded {
		return false, 0, 0
	}
	return true, zh.loadTime, zh.dict.nWords
}

func buildZhDict() (*zhDict, error) {
	seg := &gse.Segmenter{NotLoadHMM: true, SkipLog: true, MinTokenFreq: zhMinFreq}
	if err := seg.LoadDictEmbed("zh"); err != nil {
		return nil, fmt.Errorf("contentseen: load chinese dictionary: %w", err)
	}
	if seg.Dict == nil || seg.Dict.NumTokens() == 0 {
		return nil, errors.New("contentseen: load chinese dictionary: no words")
	}
	// Costs exactly as gse's CalcToken computes them, in float32.
	logTotal := float32(math.Log2(seg.Dict.TotalFreq()))
	type entry struct {
		text string
		cost float32
	}
	entries := make([]entry, 0, seg.Dict.NumTokens())
	size := 0
	for i := range seg.Dict.Tokens {
		t := &seg.Dict.Tokens[i]
		text := t.Text()
		if !allHan(text) {
			continue // words with Latin letters or digits never meet a Han run
		}
		entries = append(entries, entry{text, logTotal - float32(math.Log2(t.Freq()))})
		size += len(text)
	}
	// One backing string for all keys: half a million small strings would
	// cost an allocation and a header each.
	var b strings.Builder
	b.Grow(size)
	for _, e := range entries {
		b.WriteString(e.text)
	}
	all := b.String()
	d := &zhDict{words: make(map[string]float32, len(entries)*3/2)}
	off := 0
	for _, e := range entries {
		w := all[off : off+len(e.text)]
		off += len(e.text)
		if _, dup := d.words[w]; !dup || d.words[w] < 0 {
			d.words[w] = e.cost
			d.nWords++
		}
		n := 0
		for j := range w {
			if j > 0 {
				if _, ok := d.words[w[:j]]; !ok {
					d.words[w[:j]] = -1
				}
			}
			n++
		}
		d.maxRune = max(d.maxRune, n)
	}
	if zh.keepGSE {
		zh.gse = seg
	}
	return d, nil
}

func allHan(s string) bool {
	for _, r := range s {
		if !isHan(r) {
			return false
		}
	}
	return s != ""
}

// zhJumper records, for a position in a Han run, the cheapest path found so
// far that ends a word there: its cost and the word's length in runes.
type zhJumper struct {
	cost float32
	n    int32
}

// segmentHan appends the words of the Han run to s.ts.
func (s *scratch) segmentHan(run string, dropStopWords bool) error {
	d, err := loadChinese()
	if err != nil {
		for _, r := range run {
			start := s.ts.begin()
			s.ts.arena = utf8.AppendRune(s.ts.arena, r)
			s.ts.commit(start, dropStopWords)
		}
		return err
	}
	s.runeOffs = s.runeOffs[:0]
	for i := range run {
		s.runeOffs = append(s.runeOffs, int32(i))
	}
	s.runeOffs = append(s.runeOffs, int32(len(run)))
	ends := d.segment(run, s.runeOffs, &s.jumpers, &s.bounds)
	prev := 0
	for _, e := range ends {
		s.ts.add(run[prev:e], dropStopWords)
		prev = int(e)
	}
	return nil
}

// segment returns the byte offsets where the words of run end, in order.
// offs holds the byte offset of every rune of run and len(run) last.
// jumpers and bounds are scratch space.
//
// This is gse's Segmenter.segmentWords (non-search mode) step for step,
// including its tie-breaking: a position keeps the first path of least
// cost, trying start positions left to right and, at each, words from
// short to long, the unknown-character path last.
func (d *zhDict) segment(run string, offs []int32, jumpers *[]zhJumper, bounds *[]int32) []int32 {
	n := len(offs) - 1
	js := (*jumpers)[:0]
	js = append(js, make([]zhJumper, n)...)
	for cur := 0; cur < n; cur++ {
		var base float32
		if cur > 0 {
			base = js[cur-1].cost
		}
		single := false
		for l := 1; l <= d.maxRune && cur+l <= n; l++ {
			cost, ok := d.words[run[offs[cur]:offs[cur+l]]]
			if !ok {
				break
			}
			if cost < 0 {
				continue // only a prefix
			}
			if l == 1 {
				single = true
			}
			js[cur+l-1].update(base+cost, int32(l))
		}
		if !single {
			js[cur].update(base+zhUnknownCost, 1)
		}
	}
	*jumpers = js
	b := (*bounds)[:0]
	for i := n - 1; i >= 0; i -= int(js[i].n) {
		b = append(b, offs[i+1])
	}
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	*bounds = b
	return b
}

// update is gse's updateJumper: cost 0 means "not reached yet" (real
// costs are positive), and only a strictly cheaper path replaces one.
func (j *zhJumper) update(cost float32, n int32) {
	if j.cost == 0 || j.cost > cost {
		j.cost = cost
		j.n = n
	}
}
