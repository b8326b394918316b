package contentseen

import (
	"math"

	"github.com/zeebo/xxh3"
)

// Feature is one weighted feature of a document: a word, a shingle of
// words or a shingle of characters, or anything a caller derives itself.
// A plain value; the functions taking features only read them.
type Feature struct {
	Text   string
	Weight float64
}

// HashFeature returns the 64-bit hash of a feature: XXH3-64 with seed 0 of
// the UTF-8 bytes of s. Fingerprints are persisted, so this function is
// frozen: it never depends on the process, the platform or a random seed,
// and golden vectors in the tests pin it. Changing it invalidates every
// stored index.
func HashFeature(s string) uint64 {
	return xxh3.HashString(s)
}

// hashBytes is HashFeature for bytes, without a conversion.
func hashBytes(b []byte) uint64 {
	return xxh3.Hash(b)
}

// FromFeatures returns the Charikar SimHash of the weighted features: for
// each bit position, the sum over features of +Weight where the feature's
// HashFeature has the bit set and -Weight where it does not. A bit of the
// result is 1 where its sum is positive and 0 where the sum is zero or
// negative (the tie rule: sum == 0 gives 0, so no features at all give
// fingerprint 0).
//
// Features are taken as given: repeated texts count repeatedly, and a
// feature with weight 0 contributes nothing.
func FromFeatures(fs []Feature) Fingerprint {
	var acc accumulator
	for _, f := range fs {
		acc.add(HashFeature(f.Text), f.Weight)
	}
	return acc.fingerprint()
}

// FromHashes is FromFeatures for features already hashed: hashes[i] has
// weight weights[i]. A nil weights gives every hash weight 1. It panics if
// weights is not nil and its length differs from that of hashes, which is a
// programming error like an index out of range.
func FromHashes(hashes []uint64, weights []float64) Fingerprint {
	if weights != nil && len(weights) != len(hashes) {
		panic("contentseen: FromHashes: len(weights) != len(hashes)")
	}
	var acc accumulator
	for i, h := range hashes {
		w := 1.0
		if weights != nil {
			w = weights[i]
		}
		acc.add(h, w)
	}
	return acc.fingerprint()
}

// accumulator holds the 64 per-bit sums of a SimHash. Its zero value is
// ready to use. Not safe for concurrent use.
type accumulator [64]float64

// add adds w to the sums of the bits set in h and subtracts it from the
// others. The loop is branch-free: bit i selects +w or -w through the sign
// table, which the compiler keeps in registers.
func (a *accumulator) add(h uint64, w float64) {
	if w == 0 || math.IsNaN(w) {
		return
	}
	sign := [2]float64{-w, w}
	for i := range a {
		a[i] += sign[(h>>uint(i))&1]
	}
}

// fingerprint applies the sign rule: positive sum -> 1, zero or negative
// -> 0.
func (a *accumulator) fingerprint() Fingerprint {
	var fp uint64
	for i, s := range a {
		if s > 0 {
			fp |= 1 << uint(i)
		}
	}
	return Fingerprint(fp)
}
