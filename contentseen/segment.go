package contentseen

import (
	"errors"
	"fmt"
	"math"
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
// frequencies are then copied into a compact hash table (zhDict) and the
// gse segmenter is dropped, which leaves 4.2 MB of heap (135 MB at the
// peak of loading). Segmentation runs gse's own algorithm (the shortest path through the word lattice, a word's
// length being log2(total frequency / its frequency), an unknown character
// costing 32) over that table without allocating, because gse's Segment
// allocates per character and reaches only about 4 to 9 MB/s here (this
// one 25 MB/s or more; BenchmarkSegmentGSE). Tests check that both give
// the same words.
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

// zhDict is the segmentation dictionary, an open-addressing hash table
// keyed by a 64-bit hash of the rune sequence (runeHash), which a look-up
// extends one rune at a time instead of hashing every candidate
// substring. Every word and every proper prefix of a word is in the
// table; a look-up stops at the first miss. A slot packs a 32-bit tag
// (the hash's high half) with the float32 cost, or -1 for a prefix that is
// not a word, so that a probe touches one cache line; the table holds no
// words at all. Loading checks that no two entries are confused; a text
// substring that is no word but matches slot and tag of one (chance about
// 2^-33 per look-up) is taken for that word, the same way in every
// process. Read-only after loading, so safe for concurrent use.
type zhDict struct {
	slots   []uint64 // tag<<32 | float32 bits of the cost; 0 = empty
	shift   uint     // 64 - log2(len(slots))
	nWords  int
	maxRune int
}

// runeHash extends the hash h of a rune sequence by r. Seed with
// runeHashSeed. The multiply-xorshift mixes every rune into all 64 bits;
// the result always has a non-zero high half, so no slot is 0.
func runeHash(h uint64, r rune) uint64 {
	h = (h ^ uint64(r)) * 0x9e3779b97f4a7c15
	h ^= h >> 29
	return h | 1<<63
}

const runeHashSeed = 0x6a09e667f3bcc908

// slot returns the table index for h (Fibonacci hashing).
func (d *zhDict) slot(h uint64) uint64 {
	return (h * 0xbf58476d1ce4e5b9) >> d.shift
}

// lookup returns the cost stored for h and whether h is in the table.
func (d *zhDict) lookup(h uint64) (float32, bool) {
	mask := uint64(len(d.slots) - 1)
	tag := h >> 32
	for i := d.slot(h); ; i = (i + 1) & mask {
		e := d.slots[i]
		if e>>32 == tag {
			return math.Float32frombits(uint32(e)), true
		}
		if e == 0 {
			return 0, false
		}
	}
}

// insert stores cost for h; a word's cost replaces a prefix-only entry.
// full records the full hash of each filled slot so that two hashes with
// equal tags in one probe chain are reported instead of merged.
func (d *zhDict) insert(h uint64, cost float32, full map[uint64]uint64) error {
	mask := uint64(len(d.slots) - 1)
	tag := h >> 32
	for i := d.slot(h); ; i = (i + 1) & mask {
		e := d.slots[i]
		switch {
		case e == 0:
			d.slots[i] = tag<<32 | uint64(math.Float32bits(cost))
			full[i] = h
			return nil
		case e>>32 == tag:
			if full[i] != h {
				return fmt.Errorf("contentseen: load chinese dictionary: hash tag collision in slot %d", i)
			}
			if math.Float32frombits(uint32(e)) < 0 && cost >= 0 {
				d.slots[i] = tag<<32 | uint64(math.Float32bits(cost))
			}
			return nil
		}
	}
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
// Han character a Fingerprinter meets. It costs 1.3 to 2.4 s and 135 MB
// of transient heap, leaving 4.2 MB (see ChineseStats), once per process;
// later calls return at once with the same result. A crawler that expects Chinese pages calls
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
	for i := range seg.Dict.Tokens {
		t := &seg.Dict.Tokens[i]
		text := t.Text()
		if !allHan(text) {
			continue // words with Latin letters or digits never meet a Han run
		}
		entries = append(entries, entry{text, logTotal - float32(math.Log2(t.Freq()))})
	}
	// Size the table for a load of at most about 0.7 counting prefixes
	// (they add about a third to the words); 4 MB for the default
	// dictionary.
	bits := uint(1)
	for 1<<bits < len(entries)*4/3*10/7 {
		bits++
	}
	d := &zhDict{slots: make([]uint64, 1<<bits), shift: 64 - bits}
	full := make(map[uint64]uint64, len(entries)*4/3)
	for _, e := range entries {
		h, n := uint64(runeHashSeed), 0
		for _, r := range e.text {
			if n > 0 {
				if err := d.insert(h, -1, full); err != nil { // the prefix before r
					return nil, err
				}
			}
			h = runeHash(h, r)
			n++
		}
		if err := d.insert(h, e.cost, full); err != nil {
			return nil, err
		}
		d.nWords++
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
		h := uint64(runeHashSeed)
		for l := 1; l <= d.maxRune && cur+l <= n; l++ {
			r, _ := utf8.DecodeRuneInString(run[offs[cur+l-1]:])
			h = runeHash(h, r)
			cost, ok := d.lookup(h)
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
