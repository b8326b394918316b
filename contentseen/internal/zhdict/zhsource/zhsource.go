// Package zhsource builds contentseen's Chinese data (package zhdict) from
// its sources: gse's embedded Chinese dictionary, loaded by gse exactly as
// contentseen once loaded it at run time, and OpenCC's Traditional to
// Simplified conversion ("t2s") as github.com/longbridgeapp/opencc loads
// it. Only the generator (../../zhgen) and tests import it, so that the
// crawler binary carries neither gse's text dictionaries nor the
// converter's package-level flag.
package zhsource

import (
	"errors"
	"fmt"
	"math"
	"unicode"

	"github.com/go-ego/gse"
	"github.com/longbridgeapp/opencc"

	"github.com/simcrawl/simcrawl/contentseen/internal/zhdict"
)

// MinFreq drops dictionary words rarer than this, as gse's MinTokenFreq.
const MinFreq = 4

// LoadGSE loads gse's "zh" dictionary (Simplified and Traditional) the way
// the segmentation dictionary is derived from it: no HMM, MinFreq.
func LoadGSE() (*gse.Segmenter, error) {
	seg := &gse.Segmenter{NotLoadHMM: true, SkipLog: true, MinTokenFreq: MinFreq}
	if err := seg.LoadDictEmbed("zh"); err != nil {
		return nil, fmt.Errorf("zhsource: load gse dictionary: %w", err)
	}
	if seg.Dict == nil || seg.Dict.NumTokens() == 0 {
		return nil, errors.New("zhsource: load gse dictionary: no words")
	}
	return seg, nil
}

// Words returns the words of seg's dictionary made only of Han characters
// (the only ones a Han run can meet), with gse's path cost computed as
// gse's CalcToken does, in float32.
func Words(seg *gse.Segmenter) []zhdict.Word {
	logTotal := float32(math.Log2(seg.Dict.TotalFreq()))
	words := make([]zhdict.Word, 0, seg.Dict.NumTokens())
	for i := range seg.Dict.Tokens {
		t := &seg.Dict.Tokens[i]
		text := t.Text()
		if !allHan(text) {
			continue
		}
		words = append(words, zhdict.Word{Text: text, Cost: logTotal - float32(math.Log2(t.Freq()))})
	}
	return words
}

func allHan(s string) bool {
	for _, r := range s {
		if !unicode.Is(unicode.Han, r) {
			return false
		}
	}
	return s != ""
}

// T2S is OpenCC's "t2s" conversion as the library runs it.
func T2S() (*opencc.OpenCC, error) {
	cc, err := opencc.New("t2s")
	if err != nil {
		return nil, fmt.Errorf("zhsource: opencc t2s: %w", err)
	}
	return cc, nil
}

// Tables returns the dictionaries of cc's single conversion group in the
// order the library consults them, each entry with the first of its
// values (the one the library's Convert uses).
func Tables(cc *opencc.OpenCC) ([][]zhdict.Pair, error) {
	if len(cc.DictChains) != 1 {
		return nil, fmt.Errorf("zhsource: opencc %s has %d conversion groups, want 1", cc.Conversion, len(cc.DictChains))
	}
	var tables [][]zhdict.Pair
	for i, d := range cc.DictChains[0].Dicts {
		var pairs []zhdict.Pair
		for _, id := range d.Trie.PrefixPredict(nil, 0) {
			key, err := d.Trie.Key(id)
			if err != nil {
				return nil, fmt.Errorf("zhsource: opencc %s: %w", cc.DictChains[0].Files[i], err)
			}
			v, err := d.Trie.Value(id)
			if err != nil {
				return nil, fmt.Errorf("zhsource: opencc %s: %w", cc.DictChains[0].Files[i], err)
			}
			if v < 0 || v >= len(d.Values) || len(d.Values[v]) == 0 {
				return nil, fmt.Errorf("zhsource: opencc %s: %q has no value", cc.DictChains[0].Files[i], key)
			}
			pairs = append(pairs, zhdict.Pair{From: string(key), To: d.Values[v][0]})
		}
		tables = append(tables, pairs)
	}
	return tables, nil
}

// Build returns the encoded data: the generated file's contents.
func Build() ([]byte, error) {
	seg, err := LoadGSE()
	if err != nil {
		return nil, err
	}
	return BuildFrom(seg)
}

// BuildFrom is Build with gse's dictionary loaded already (LoadGSE).
func BuildFrom(seg *gse.Segmenter) ([]byte, error) {
	cc, err := T2S()
	if err != nil {
		return nil, err
	}
	tables, err := Tables(cc)
	if err != nil {
		return nil, err
	}
	return zhdict.Encode(&zhdict.Data{Words: Words(seg), Tables: tables})
}
