package contentseen

import (
	_ "embed" // zhdict.bin
	"fmt"
	"math"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/simcrawl/simcrawl/contentseen/internal/zhdict"
)

// Chinese word segmentation.
//
// The dictionary is gse's embedded Chinese dictionary, Simplified (s_1.txt)
// and Traditional (t_1.txt) together ("zh"): Simplified alone leaves
// Traditional text in single characters and the reverse, and the
// Traditional list lacks the words both scripts share. Words with a
// dictionary frequency below 4 (gse's MinTokenFreq) are left out: with
// them, loading took 3.2 s and 204 MB of heap inside gse, and word
// boundaries on the gne-zh corpus agree with the full dictionary's at F1
// 0.96 (recall 0.999: the rare words dropped split into common ones).
//
// gse is not called at run time. `go generate` (internal/zhgen) loads the
// dictionary with gse once and writes its words made of Han characters,
// with gse's path costs, to zhdict.bin (front-coded, DEFLATE, about 1 MB,
// embedded in the binary; the format is internal/zhdict's). A process
// reads it into a compact hash table (zhDict) on the first Han character:
// 74 to 104 ms of CPU on the loaded development machine and 5.5 MB
// allocated (BenchmarkLoadChinese), where gse's own loading of the text
// dictionary took 1.1 to 2.2 CPU-seconds and 310 MB of allocations
// (160 MB resident). TestZhDataUpToDate checks the file against what gse
// loads today.
//
// Segmentation runs gse's own algorithm (the shortest path through the
// word lattice, a word's length being log2(total frequency / its
// frequency), an unknown character costing 32) over that table without
// allocating, because gse's Segment allocates per character and is
// several times slower (BenchmarkSegmentGSE). TestSegmentMatchesGSE
// checks that both give the same words, on the fixtures and the gne-zh
// corpus.
//
// gse's HMM (for words not in the dictionary) is never used: it is
// quadratic on long non-Chinese text, and the fingerprint needs consistent
// tokens, not linguistically perfect ones.

//go:generate go run ./internal/zhgen zhdict.bin

// zhData is the generated dictionary file (see above).
//
//go:embed zhdict.bin
var zhData string

// zhUnknownCost is gse's cost of a character not in the dictionary.
const zhUnknownCost = 32

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
	used    int // entries inserted
	limit   int // entries the file announced
	// first holds the table's answer for every one-rune string of the CJK
	// Unified Ideographs block (zhFirstLo on): the word's cost, -1 for a
	// prefix that is no word, 0 for neither. Every segmentation step
	// starts with one such look-up, so this keeps it out of the big table.
	first []float32
	// short has the bit shortBit(h) set for the hash h of every word or
	// prefix of two or three runes: a clear bit saves a look-up that would
	// miss (most look-ups past the first rune miss).
	short []uint64
}

const (
	zhFirstLo = 0x4E00
	zhFirstHi = 0x9FFF
	shortBits = 22 // 512 KB: about one bit in twelve set
)

func shortBit(h uint64) uint64 { return h >> (64 - shortBits) }

func (d *zhDict) mayHaveShort(h uint64) bool {
	b := shortBit(h)
	return d.short[b/64]&(1<<(b%64)) != 0
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

// insert stores cost for h, which must not be in the table yet (the
// reader inserts every word and prefix once): an entry with h's tag in
// its probe chain is a different string whose look-ups h would answer,
// and an error.
func (d *zhDict) insert(h uint64, cost float32) error {
	if d.used++; d.used > d.limit {
		return fmt.Errorf("contentseen: load chinese dictionary: %w: more entries than the header says", zhdict.ErrCorrupt)
	}
	mask := uint64(len(d.slots) - 1)
	tag := h >> 32
	for i := d.slot(h); ; i = (i + 1) & mask {
		e := d.slots[i]
		switch {
		case e == 0:
			d.slots[i] = tag<<32 | uint64(math.Float32bits(cost))
			return nil
		case e>>32 == tag:
			return fmt.Errorf("contentseen: load chinese dictionary: hash tag collision in slot %d", i)
		}
	}
}

// zh holds the shared Chinese data, loaded on first use.
var zh struct {
	once     sync.Once
	dict     *zhDict
	t2s      *t2sConverter
	err      error
	loadTime time.Duration

	mu     sync.Mutex // guards loaded
	loaded bool
}

// loadChinese returns the shared dictionary and converter, loading them
// once.
func loadChinese() (*zhDict, *t2sConverter, error) {
	zh.once.Do(func() {
		start := time.Now()
		zh.dict, zh.t2s, zh.err = readZhData(zhData)
		zh.loadTime = time.Since(start)
		zh.mu.Lock()
		zh.loaded = zh.err == nil
		zh.mu.Unlock()
	})
	return zh.dict, zh.t2s, zh.err
}

// PreloadChinese loads the Chinese dictionary now instead of at the first
// Han character a Fingerprinter meets. It costs about 0.1 CPU-second and
// 5.5 MB allocated, nearly all kept (see ChineseStats), once per process;
// later calls return at once with the same result. A crawler that expects
// Chinese pages may call it at start-up.
func PreloadChinese() error {
	_, _, err := loadChinese()
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

// readZhData builds the segmentation table and the converter from the
// generated file. Words come sorted, each with the number of bytes it
// shares with the word before, so the hashes of the shared runes are
// kept (hs[k]: the hash after k runes, ends[k]: the byte offset after
// them) and every prefix is inserted exactly once, by the first word
// that has it.
func readZhData(data string) (*zhDict, *t2sConverter, error) {
	r, err := zhdict.NewReader(strings.NewReader(data))
	if err != nil {
		return nil, nil, fmt.Errorf("contentseen: load chinese dictionary: %w", err)
	}
	// Size the table for a load of at most 0.7 (4 MB for the default
	// dictionary); insert refuses to fill it further than that, so a
	// file whose counts lie cannot make a probe loop forever.
	bits := uint(4)
	for 1<<bits < r.Entries()*10/7 {
		bits++
	}
	d := &zhDict{slots: make([]uint64, 1<<bits), shift: 64 - bits, short: make([]uint64, 1<<shortBits/64)}
	d.limit = r.Entries()
	hs := []uint64{runeHashSeed}
	ends := []int{0}
	for {
		w, shared, cost, ok, err := r.NextWord()
		if err != nil {
			return nil, nil, fmt.Errorf("contentseen: load chinese dictionary: %w", err)
		}
		if !ok {
			break
		}
		k := 0 // runes shared with the word before
		for k+1 < len(ends) && ends[k+1] <= shared {
			k++
		}
		hs, ends = hs[:k+1], ends[:k+1]
		for i := ends[k]; i < len(w); {
			if m := len(hs) - 1; m > k { // a prefix no word before had
				if err := d.insert(hs[m], -1); err != nil {
					return nil, nil, err
				}
			}
			rn, size := utf8.DecodeRune(w[i:])
			i += size
			hs = append(hs, runeHash(hs[len(hs)-1], rn))
			ends = append(ends, i)
		}
		if len(ends)-1 == k {
			return nil, nil, fmt.Errorf("contentseen: load chinese dictionary: %w: word %q repeated", zhdict.ErrCorrupt, w)
		}
		if err := d.insert(hs[len(hs)-1], cost); err != nil {
			return nil, nil, err
		}
		for m := k + 1; m <= 3 && m < len(hs); m++ { // new prefixes (or the word) of 2 or 3 runes
			if m >= 2 {
				b := shortBit(hs[m])
				d.short[b/64] |= 1 << (b % 64)
			}
		}
		d.nWords++
		d.maxRune = max(d.maxRune, len(ends)-1)
	}
	d.first = make([]float32, zhFirstHi-zhFirstLo+1)
	for i := range d.first {
		if cost, ok := d.lookup(runeHash(runeHashSeed, rune(zhFirstLo+i))); ok {
			d.first[i] = cost
		}
	}
	tables, err := r.Tables()
	if err != nil {
		return nil, nil, fmt.Errorf("contentseen: load chinese dictionary: %w", err)
	}
	return d, newT2SConverter(tables), nil
}

// zhJumper records, for a position in a Han run, the cheapest path found so
// far that ends a word there: its cost and the word's length in runes.
type zhJumper struct {
	cost float32
	n    int32
}

// segmentHan appends the words of the Han run to s.ts, converted to
// Simplified script first if toSimplified.
func (s *scratch) segmentHan(run string, dropStopWords, toSimplified bool) error {
	d, conv, err := loadChinese()
	if err != nil {
		for _, r := range run {
			start := s.ts.begin()
			s.ts.arena = utf8.AppendRune(s.ts.arena, r)
			s.ts.commit(start, dropStopWords)
		}
		return err
	}
	if toSimplified {
		run, s.simplified = conv.convert(run, s.simplified, &s.runeOffs)
	}
	s.runeOffs, s.runes = s.runeOffs[:0], s.runes[:0]
	for i, r := range run {
		s.runeOffs = append(s.runeOffs, int32(i))
		s.runes = append(s.runes, r)
	}
	s.runeOffs = append(s.runeOffs, int32(len(run)))
	ends := d.segment(s.runes, s.runeOffs, &s.jumpers, &s.bounds)
	prev := 0
	for _, e := range ends {
		s.ts.add(run[prev:e], dropStopWords)
		prev = int(e)
	}
	return nil
}

// segment returns the byte offsets where the words of a run end, in
// order. runes are the run's runes, offs the byte offset of every rune and
// the run's length last. jumpers and bounds are scratch space.
//
// This is gse's Segmenter.segmentWords (non-search mode) step for step,
// including its tie-breaking: a position keeps the first path of least
// cost, trying start positions left to right and, at each, words from
// short to long, the unknown-character path last.
func (d *zhDict) segment(runes []rune, offs []int32, jumpers *[]zhJumper, bounds *[]int32) []int32 {
	n := len(runes)
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
			r := runes[cur+l-1]
			h = runeHash(h, r)
			var cost float32
			var ok bool
			switch {
			case l == 1 && r >= zhFirstLo && r <= zhFirstHi:
				cost = d.first[r-zhFirstLo]
				ok = cost != 0
			case l <= 3 && !d.mayHaveShort(h):
				ok = false
			default:
				cost, ok = d.lookup(h)
			}
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
