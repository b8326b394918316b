// Package zhdict is the file format of contentseen's Chinese data: the
// segmentation dictionary taken from gse (words and their path costs) and
// the Traditional-to-Simplified tables taken from OpenCC, written at
// `go generate` time by ../zhgen and embedded in the binary, so that a
// process reads them in a few tens of milliseconds instead of parsing
// gse's text dictionaries (seconds and 300 MB of garbage).
//
// The format, before DEFLATE compression (compress/flate, best
// compression), all integers unsigned varints:
//
//	magic "zhdict2\n"
//	nCosts, then nCosts float32 values, little-endian: the distinct costs
//	nEntries: the words and their proper prefixes (in runes), distinct
//	nWords, then per word, in byte order of the UTF-8 text:
//	    shared (bytes in common with the word before), len(suffix), suffix,
//	    index of the word's cost
//	nTables, then per table: nPairs, then per pair
//	    len(from), from, len(to), to
//
// Words sorted in byte order share their prefixes with the word before,
// which is what both the compression (front coding) and the reader's
// incremental hashing use. Tables are written in the order the converter
// consults them.
package zhdict

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

const magic = "zhdict2\n"

// Word is a dictionary word with its path cost (gse's distance:
// log2(total frequency) - log2(frequency), in float32).
type Word struct {
	Text string
	Cost float32
}

// Pair maps a text to its replacement.
type Pair struct {
	From, To string
}

// Data is everything the file holds.
type Data struct {
	Words  []Word   // any order; Encode sorts a copy
	Tables [][]Pair // in the order the converter consults them
}

// Encode writes d in the format above, compressed.
func Encode(d *Data) ([]byte, error) {
	words := slices.Clone(d.Words)
	slices.SortFunc(words, func(a, b Word) int { return strings.Compare(a.Text, b.Text) })
	for i := 1; i < len(words); i++ {
		if words[i].Text == words[i-1].Text {
			return nil, fmt.Errorf("zhdict: word %q twice", words[i].Text)
		}
	}
	costSet := map[float32]bool{}
	for _, w := range words {
		if w.Text == "" || w.Cost <= 0 || math.IsNaN(float64(w.Cost)) || math.IsInf(float64(w.Cost), 0) {
			return nil, fmt.Errorf("zhdict: word %q with cost %v", w.Text, w.Cost)
		}
		costSet[w.Cost] = true
	}
	costs := make([]float32, 0, len(costSet))
	for c := range costSet {
		costs = append(costs, c)
	}
	slices.Sort(costs)
	index := make(map[float32]int, len(costs))
	for i, c := range costs {
		index[c] = i
	}
	var raw []byte
	raw = append(raw, magic...)
	raw = binary.AppendUvarint(raw, uint64(len(costs)))
	for _, c := range costs {
		raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(c))
	}
	entries := map[string]bool{}
	for _, w := range words {
		for i := range w.Text {
			if i > 0 {
				entries[w.Text[:i]] = true
			}
		}
		entries[w.Text] = true
	}
	raw = binary.AppendUvarint(raw, uint64(len(entries)))
	raw = binary.AppendUvarint(raw, uint64(len(words)))
	prev := ""
	for _, w := range words {
		shared := 0
		for shared < len(prev) && shared < len(w.Text) && prev[shared] == w.Text[shared] {
			shared++
		}
		raw = binary.AppendUvarint(raw, uint64(shared))
		raw = appendString(raw, w.Text[shared:])
		raw = binary.AppendUvarint(raw, uint64(index[w.Cost]))
		prev = w.Text
	}
	raw = binary.AppendUvarint(raw, uint64(len(d.Tables)))
	for _, t := range d.Tables {
		raw = binary.AppendUvarint(raw, uint64(len(t)))
		for _, p := range t {
			raw = appendString(raw, p.From)
			raw = appendString(raw, p.To)
		}
	}
	var buf bytes.Buffer
	zw, err := flate.NewWriter(&buf, flate.BestCompression)
	if err != nil {
		return nil, fmt.Errorf("zhdict: %w", err)
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, fmt.Errorf("zhdict: compress: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("zhdict: compress: %w", err)
	}
	return buf.Bytes(), nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// Reader reads an encoded file in order: Costs, then every word with
// NextWord, then Tables.
type Reader struct {
	r       *bufio.Reader
	costs   []float32
	entries int
	words   int // words left
	word    []byte
}

// ErrCorrupt reports data that is not in the format.
var ErrCorrupt = errors.New("zhdict: corrupt data")

// NewReader starts reading data (compressed, as Encode wrote it) and
// reads the header and the cost table.
func NewReader(data io.Reader) (*Reader, error) {
	r := &Reader{r: bufio.NewReaderSize(flate.NewReader(data), 64<<10)}
	var m [len(magic)]byte
	if _, err := io.ReadFull(r.r, m[:]); err != nil || string(m[:]) != magic {
		return nil, fmt.Errorf("%w: bad header", ErrCorrupt)
	}
	n, err := r.count(1 << 20)
	if err != nil {
		return nil, err
	}
	r.costs = make([]float32, n)
	var b [4]byte
	for i := range r.costs {
		if _, err := io.ReadFull(r.r, b[:]); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		r.costs[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[:]))
	}
	if r.entries, err = r.count(1 << 26); err != nil {
		return nil, err
	}
	if r.words, err = r.count(uint64(r.entries)); err != nil {
		return nil, err
	}
	return r, nil
}

// Entries returns the number of distinct words and proper prefixes of
// words (whole runes), for sizing a table of both.
func (r *Reader) Entries() int { return r.entries }

// count reads a count and checks it against limit.
func (r *Reader) count(limit uint64) (int, error) {
	v, err := binary.ReadUvarint(r.r)
	if err != nil || v > limit {
		return 0, fmt.Errorf("%w: bad count", ErrCorrupt)
	}
	return int(v), nil
}

// Words returns the number of words not read yet.
func (r *Reader) Words() int { return r.words }

// NextWord returns the next word, how many of its leading bytes it shares
// with the word before, and its cost. The slice is valid until the next
// call. ok is false after the last word.
func (r *Reader) NextWord() (word []byte, shared int, cost float32, ok bool, err error) {
	if r.words == 0 {
		return nil, 0, 0, false, nil
	}
	r.words--
	s, err := r.count(uint64(len(r.word)))
	if err != nil {
		return nil, 0, 0, false, err
	}
	n, err := r.count(1 << 10)
	if err != nil {
		return nil, 0, 0, false, err
	}
	r.word = slices.Grow(r.word[:s], n)[:s+n]
	if _, err := io.ReadFull(r.r, r.word[s:]); err != nil {
		return nil, 0, 0, false, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	c, err := r.count(uint64(len(r.costs) - 1))
	if err != nil {
		return nil, 0, 0, false, err
	}
	return r.word, s, r.costs[c], true, nil
}

// Tables reads the tables; call it after the last word.
func (r *Reader) Tables() ([][]Pair, error) {
	if r.words != 0 {
		return nil, errors.New("zhdict: Tables called before the last word")
	}
	n, err := r.count(64)
	if err != nil {
		return nil, err
	}
	tables := make([][]Pair, n)
	for i := range tables {
		m, err := r.count(1 << 20)
		if err != nil {
			return nil, err
		}
		tables[i] = make([]Pair, m)
		for j := range tables[i] {
			if tables[i][j].From, err = r.string(); err != nil {
				return nil, err
			}
			if tables[i][j].To, err = r.string(); err != nil {
				return nil, err
			}
		}
	}
	if _, err := r.r.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the tables", ErrCorrupt)
	}
	return tables, nil
}

func (r *Reader) string() (string, error) {
	n, err := r.count(1 << 10)
	if err != nil {
		return "", err
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r.r, b); err != nil {
		return "", fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return string(b), nil
}

// Decode reads all of data: meant for tests and tools, it allocates every word.
func Decode(data []byte) (*Data, error) {
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	d := &Data{Words: make([]Word, 0, r.Words())}
	for {
		w, _, c, ok, err := r.NextWord()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		d.Words = append(d.Words, Word{string(w), c})
	}
	if d.Tables, err = r.Tables(); err != nil {
		return nil, err
	}
	return d, nil
}
