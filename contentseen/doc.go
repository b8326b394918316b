// Package contentseen decides whether a crawled page's text is new or a
// near-duplicate of one already seen: it reduces the text to a 64-bit
// SimHash Fingerprint, and an Index answers "is a stored fingerprint within
// k bits?" and records the new one in the same atomic step.
//
// # Fingerprints
//
// A Fingerprinter turns text into weighted features and the features into
// a Charikar SimHash: every feature's 64-bit hash votes on every bit, +w
// where the hash has the bit set and -w where it does not, and the sign of
// each sum is the bit (a sum of exactly 0 gives 0). Similar texts share
// most weighted features, so most sums keep their sign: for each bit the
// chance that two texts differ is about θ/π, θ the angle between their
// weighted feature vectors. The expected Hamming distance is therefore
// 64·θ/π, and k=3 corresponds to a cosine similarity of about 0.99.
//
// The pipeline, in this order:
//
//  1. Unicode NFKC normalisation (full-width letters, digits and
//     punctuation become ASCII; ligatures and compatibility forms are
//     expanded), then simple case folding.
//  2. Tokenisation: runs of Han characters are segmented into words with
//     gse's Chinese dictionary (see below); everything else is split into
//     words by a hand-written scanner (letters, digits and marks; "don't",
//     "3.14" and "1,000" stay whole). Scripts written without spaces other
//     than Chinese (Thai, Japanese kana) come out as long runs; Japanese
//     kanji go through the Chinese segmenter (and load its dictionary).
//  3. Stop words dropped: short English and Chinese (Simplified and
//     Traditional) lists of function words, in code.
//  4. Features, chosen by Options.Kind: words (the default), word
//     shingles (N consecutive tokens joined by a space) or character
//     shingles (N consecutive runes of the tokens joined by spaces).
//     Shingles are built over the token stream after stop-word removal.
//  5. Weights 1+ln(tf) for a feature occurring tf times, times
//     Options.IDF[feature] when an IDF table is given.
//  6. HashFeature (XXH3-64, seed 0) of each feature's text, summed as above.
//
// Every step is deterministic and process-independent, because
// fingerprints are stored: the hash is pinned by golden vectors checked
// against the reference C implementation, and the stop-word lists and the
// dictionary are part of the scheme. Options.String names the scheme, for an
// index to record so that it never mixes schemes.
//
// A text with fewer distinct features than Options.MinFeatures (default
// 8) gives ErrNotEnoughContent instead of a fingerprint: near-empty pages
// would otherwise all collide with one another, and with so few features
// one changed word flips many bits.
//
// FromFeatures and FromHashes take the caller's own weighted features, and
// Fingerprinter.FromTokens the caller's own token stream.
// Fingerprinter.Features and Tokens show what a fingerprint was made of.
//
// Cost, per core on the shared development machine (BenchmarkFingerprint,
// medians): about 95 MB/s of English text and 24 MB/s of Chinese text
// (segmentation included) with word features, 75 and 23 MB/s with word
// bigrams, 32 and 15 MB/s with character 4-grams. A Fingerprinter is safe
// for concurrent use and allocates almost nothing per call (pooled
// buffers).
//
// The Chinese dictionary is gse's embedded Simplified plus Traditional
// dictionary without its rarest words. It is loaded once per process, on
// the first Han character or by PreloadChinese: 1.3 to 2.4 s on the shared
// development machine (11 s under -race) and 135 MB of transient heap,
// leaving 4.2 MB (ChineseStats reports the load).
// Segmentation is gse's shortest-path algorithm re-implemented without
// allocations (tests check it gives gse's words); gse's HMM is never used.
//
// Caveats:
//   - There is no Traditional-to-Simplified conversion: the same article
//     in both scripts gets unrelated fingerprints.
//   - k=3 is strict. With word features, a new title plus an advertising
//     line on a 650-word article moves the fingerprint 3 to 8 bits (median
//     5), and so does dropping three short phrases from a 500-character
//     Chinese article; character 4-grams do better on the former (median
//     3). Fingerprint the extracted body without its title, and calibrate
//     the scheme and k on real pairs (crawl eval).
//   - Changing the stop-word lists, the scanner, the dictionary or its
//     frequency cut-off changes fingerprints; golden tests catch it.
//
// # Index
//
// (To be written with the index: the Index contract, the table layouts,
// the in-memory and bbolt implementations, and their costs.)
package contentseen
