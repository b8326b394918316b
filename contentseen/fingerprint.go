package contentseen

import (
	"fmt"
	"math/bits"
	"strconv"
)

// Fingerprint is a 64-bit SimHash of a document's features. Two documents
// whose fingerprints differ in few bits are near-duplicates.
type Fingerprint uint64

// Distance returns the Hamming distance between a and b: the number of bit
// positions in which they differ, from 0 to 64.
func Distance(a, b Fingerprint) int {
	return bits.OnesCount64(uint64(a ^ b))
}

// Similarity returns (64 - Distance(a, b)) / 64: 1 for identical
// fingerprints, 0 for complementary ones.
func Similarity(a, b Fingerprint) float64 {
	return float64(64-Distance(a, b)) / 64
}

// String returns the fingerprint as 16 lower-case hex digits, the form used
// in logs, exports and fingerprint files.
func (f Fingerprint) String() string {
	return fmt.Sprintf("%016x", uint64(f))
}

// ParseFingerprint parses 1 to 16 hex digits, as written by String.
func ParseFingerprint(s string) (Fingerprint, error) {
	if len(s) == 0 || len(s) > 16 {
		return 0, fmt.Errorf("contentseen: parse fingerprint %q: want 1 to 16 hex digits", s)
	}
	v, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("contentseen: parse fingerprint %q: %w", s, err)
	}
	return Fingerprint(v), nil
}
