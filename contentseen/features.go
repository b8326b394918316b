package contentseen

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"
	"unicode/utf8"
)

// Fingerprinter turns text into fingerprints under one Options. It is safe
// for concurrent use: per-call buffers come from a pool, and everything
// else is read-only after NewFingerprinter.
type Fingerprinter struct {
	opts       Options // with defaults filled in
	idf        map[string]float64
	idfMissing float64 // weight factor for a feature missing from idf
	pool       sync.Pool
}

// scratch is the per-call working memory, reused through a sync.Pool so
// that fingerprinting allocates nothing per token. Not safe for concurrent
// use.
type scratch struct {
	norm       []byte
	ts         tokenStream
	runeOffs   []int32
	runes      []rune
	simplified []byte // a Han run converted to Simplified script
	jumpers    []zhJumper
	bounds     []int32
	counts     hashCounts
	ring       []int32 // char shingles: byte offsets of the last N+1 runes
	zhErr      error   // set by tokenize when the Chinese dictionary failed
}

// maxPooledArena bounds the arena kept in the pool, so that one huge
// document does not pin its buffers for the life of the process.
const maxPooledArena = 4 << 20

// NewFingerprinter returns a Fingerprinter for o, or o's validation error.
// It does not load the Chinese dictionary; see PreloadChinese.
func NewFingerprinter(o Options) (*Fingerprinter, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	f := &Fingerprinter{opts: o.withDefaults(), idf: o.IDF}
	f.opts.IDF = nil
	for _, v := range o.IDF {
		f.idfMissing = max(f.idfMissing, v)
	}
	f.pool.New = func() any { return new(scratch) }
	return f, nil
}

// Options returns the options in effect, defaults filled in.
func (f *Fingerprinter) Options() Options {
	o := f.opts
	o.IDF = f.idf
	return o
}

func (f *Fingerprinter) get() *scratch {
	s := f.pool.Get().(*scratch)
	s.ts.reset()
	s.zhErr = nil
	return s
}

func (f *Fingerprinter) put(s *scratch) {
	if cap(s.ts.arena) > maxPooledArena || cap(s.norm) > maxPooledArena || cap(s.counts.keys) > maxPooledArena/8 {
		return
	}
	f.pool.Put(s)
}

// Fingerprint returns the SimHash of text and its number of distinct
// features. With fewer distinct features than Options.MinFeatures it
// returns fingerprint 0 and an error wrapping ErrNotEnoughContent that
// gives the count; the count is returned either way. If the Chinese
// dictionary cannot be loaded it returns that error (Han text would
// otherwise be fingerprinted differently from other processes).
//
// The result equals FromFeatures(f.Features(text)) up to floating-point
// rounding in the sums, which cannot change a bit unless a sum is within
// rounding of zero.
func (f *Fingerprinter) Fingerprint(text string) (fp Fingerprint, features int, err error) {
	s := f.get()
	defer f.put(s)
	s.tokenize(text, true, f.opts.Tokenizer)
	if s.zhErr != nil {
		return 0, 0, s.zhErr
	}
	return f.finish(s)
}

// FromTokens is Fingerprint for a caller's own token stream. The tokens
// are used as given: not normalised, not segmented and with no stop words
// removed; empty tokens are skipped. Shingles, weights and the minimum
// apply as for Fingerprint.
func (f *Fingerprinter) FromTokens(tokens []string) (Fingerprint, int, error) {
	s := f.get()
	defer f.put(s)
	for _, t := range tokens {
		s.ts.add(t, false)
	}
	return f.finish(s)
}

// Tokens returns the normalised word tokens of text, stop words removed,
// with the current tokenizer: the stream that features are built from.
// Meant for diffs and debugging; it allocates every token.
func Tokens(text string) []string {
	var s scratch
	// A dictionary failure splits Han runs into single characters (in
	// s.zhErr); Fingerprint reports it.
	s.tokenize(text, true, CurrentTokenizer)
	return tokenStrings(&s)
}

// Tokens returns the token stream of text under f's options (its
// tokenizer version), stop words removed.
func (f *Fingerprinter) Tokens(text string) []string {
	var s scratch
	s.tokenize(text, true, f.opts.Tokenizer)
	return tokenStrings(&s)
}

// tokenStrings copies the token stream of s out as strings.
func tokenStrings(s *scratch) []string {
	out := make([]string, s.ts.len())
	for i := range out {
		out[i] = string(s.ts.token(i))
	}
	return out
}

// Features returns the weighted features of text, heaviest first, ties in
// text order: what `crawl dups show` and `crawl eval` print to explain a
// decision. Weights are 1+ln(tf), times the IDF factor when set. If the
// Chinese dictionary cannot be loaded, Han runs are split into single
// characters here (Fingerprint reports the error).
func (f *Fingerprinter) Features(text string) []Feature {
	s := f.get()
	defer f.put(s)
	s.tokenize(text, true, f.opts.Tokenizer)
	tf := make(map[string]int)
	f.eachFeature(s, func(b []byte) { tf[string(b)]++ })
	out := make([]Feature, 0, len(tf))
	for text, n := range tf {
		out = append(out, Feature{Text: text, Weight: f.weight(n, text)})
	}
	slices.SortFunc(out, func(a, b Feature) int {
		if c := cmp.Compare(b.Weight, a.Weight); c != 0 {
			return c
		}
		return cmp.Compare(a.Text, b.Text)
	})
	return out
}

// weight is 1+ln(tf), times the IDF factor of the feature text.
func (f *Fingerprinter) weight(tf int, text string) float64 {
	w := 1 + math.Log(float64(tf))
	if f.idf != nil {
		v, ok := f.idf[text]
		if !ok {
			v = f.idfMissing
		}
		w *= v
	}
	return w
}

// eachFeature calls fn with the bytes of every feature of the token stream
// in order, repeats included. The slice is valid only during the call.
func (f *Fingerprinter) eachFeature(s *scratch, fn func([]byte)) {
	ts := &s.ts
	n := ts.len()
	if n == 0 {
		return
	}
	switch f.opts.Kind {
	case Words:
		for i := range n {
			fn(ts.token(i))
		}
	case WordShingles:
		k := f.opts.N
		if n < k {
			fn(ts.arena) // a text shorter than one shingle is one shingle
			return
		}
		for i := 0; i+k <= n; i++ {
			fn(ts.arena[ts.starts[i]:ts.ends[i+k-1]])
		}
	case CharShingles:
		f.eachCharShingle(s, fn)
	}
}

// eachCharShingle calls fn with every window of N runes of the arena,
// keeping the byte offsets of the last N+1 rune starts in a ring.
func (f *Fingerprinter) eachCharShingle(s *scratch, fn func([]byte)) {
	a := s.ts.arena
	k := f.opts.N
	ring := s.ring[:0]
	ring = append(ring, make([]int32, k+1)...)
	s.ring = ring
	count := 0
	for i := 0; i < len(a); {
		size := 1
		if a[i] >= utf8.RuneSelf {
			_, size = utf8.DecodeRune(a[i:])
		}
		ring[count%(k+1)] = int32(i)
		count++
		i += size
		if count >= k {
			first := ring[(count-k)%(k+1)]
			fn(a[first:i])
		}
	}
	if count < k {
		fn(a) // shorter than one shingle: one shingle
	}
}

// finish hashes the features, counts distinct ones and accumulates the
// SimHash. Without IDF, features are identified by their 64-bit hash and
// counted in a reusable open-addressing table (hashCounts), which is
// cheaper than a map or sorting. The order of the sums differs from
// FromFeatures(Features(text)), which only matters if a sum is within
// rounding of zero.
func (f *Fingerprinter) finish(s *scratch) (Fingerprint, int, error) {
	var acc accumulator
	distinct := 0
	if f.idf != nil {
		tf := make(map[string]int)
		f.eachFeature(s, func(b []byte) { tf[string(b)]++ })
		for text, n := range tf {
			acc.add(HashFeature(text), f.weight(n, text))
		}
		distinct = len(tf)
	} else {
		expect := s.ts.len() // about the number of features; the table grows if needed
		if f.opts.Kind == CharShingles {
			expect = len(s.ts.arena)
		}
		s.counts.reset(expect)
		if f.opts.Kind == Words {
			for _, h := range s.ts.hashes {
				s.counts.add(h) // hashed already by the tokenizer
			}
		} else {
			f.eachFeature(s, func(b []byte) { s.counts.add(hashBytes(b)) })
		}
		for i, n := range s.counts.n {
			if n > 0 {
				acc.add(s.counts.keys[i], tfWeight(int(n)))
				distinct++
			}
		}
	}
	if distinct < f.opts.MinFeatures {
		return 0, distinct, fmt.Errorf("%w: %d distinct features, want at least %d", ErrNotEnoughContent, distinct, f.opts.MinFeatures)
	}
	return acc.fingerprint(), distinct, nil
}

// tfWeight is 1+ln(tf), from a table for the common small counts.
func tfWeight(tf int) float64 {
	if tf < len(tfWeights) {
		return tfWeights[tf]
	}
	return 1 + math.Log(float64(tf))
}

var tfWeights = func() (t [64]float64) {
	for i := 1; i < len(t); i++ {
		t[i] = 1 + math.Log(float64(i))
	}
	return t
}()

// hashCounts counts feature hashes: open addressing with linear probing,
// n[i] == 0 marking an empty slot, doubled when half full. It is reused
// across calls. Not safe for concurrent use.
type hashCounts struct {
	keys     []uint64
	n        []int32
	shift    uint
	distinct int
}

// reset empties the table and sizes it for about expect distinct keys
// (at most 64Ki at first; it grows as needed). The backing arrays only
// grow; a smaller text uses (and clears) a prefix of them.
func (c *hashCounts) reset(expect int) {
	bits := uint(4)
	for 1<<bits < 2*expect && bits < 16 {
		bits++
	}
	c.size(bits)
}

func (c *hashCounts) size(bits uint) {
	if cap(c.keys) < 1<<bits {
		c.keys = make([]uint64, 1<<bits)
		c.n = make([]int32, 1<<bits)
	} else {
		c.keys = c.keys[:1<<bits]
		c.n = c.n[:1<<bits]
		clear(c.n)
	}
	c.shift = 64 - bits
	c.distinct = 0
}

func (c *hashCounts) add(h uint64) {
	c.addN(h, 1)
}

func (c *hashCounts) addN(h uint64, n int32) {
	mask := uint64(len(c.keys) - 1)
	for i := (h * 0x9e3779b97f4a7c15) >> c.shift; ; i = (i + 1) & mask {
		if c.n[i] == 0 {
			c.keys[i], c.n[i] = h, n
			c.distinct++
			if 2*c.distinct > len(c.keys) {
				c.grow()
			}
			return
		}
		if c.keys[i] == h {
			c.n[i] += n
			return
		}
	}
}

// grow doubles the table, re-inserting the counted keys.
func (c *hashCounts) grow() {
	oldKeys := slices.Clone(c.keys)
	oldN := slices.Clone(c.n)
	c.size(uint(64-c.shift) + 1)
	for i, n := range oldN {
		if n > 0 {
			c.addN(oldKeys[i], n)
		}
	}
}
