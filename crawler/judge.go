package crawler

import (
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/storage"
)

// The judge decides whether a page is a copy of a stored page, in two
// stages:
//
//  1. candidates: an exact copy (the same contentseen.TextDigest: the same
//     letters and digits once the page's own headline is stripped), else
//     every stored page whose SimHash is within k bits (the candidate
//     radius, contentseen.k; for a short text, one of fewer than
//     contentseen.short_features distinct features, short_k when larger),
//     nearest first, ties by page id;
//  2. verification: a candidate is a copy only when the sketches of the
//     two texts agree (contentseen.Thresholds.Verify: Jaccard similarity
//     of word 3-shingles, or containment of the smaller text in the
//     larger). The first candidate that verifies is the page duplicated.
//
// SimHash alone cannot tell "4 bits because 2% of the words were edited"
// from "4 bits because two short articles share a template"; the sketch
// can, so the radius can be wide (recall) without dropping distinct
// articles (precision).
//
// Pages stored before sketches existed (an older data directory) have
// none: their sketch, and whether they are exact copies, are computed from
// their stored text when they are candidates (verifyTx), and a copy of
// such a page is labelled exact when its normalised text is the same.

// verdict is a verified duplicate: the stored page, why, the SimHash
// distance and the resemblance of the texts.
type verdict struct {
	id     uint64
	reason string // reasonExact or reasonNear
	dist   int
	res    contentseen.Resemblance
	// byDigest: found by the digest look-up, before any candidate (an
	// exact copy of a page stored before sketches is found as a
	// candidate instead).
	byDigest bool
	// orig is the stored page's header when the look-up already read it
	// (the digest path), so the drop record does not read it again.
	orig *storage.Page
}

// judgeTx returns the stored page p duplicates, or nil, looking only at
// what tx sees.
func (c *Crawler) judgeTx(tx *bolt.Tx, p *page) (*verdict, error) {
	if id, ok := c.store.ByDigestTx(tx, p.digest); ok {
		orig, err := c.store.PageHeaderTx(tx, id)
		if err != nil {
			return nil, fmt.Errorf("exact match %d: %w", id, err)
		}
		return &verdict{id: id, reason: reasonExact, dist: contentseen.Distance(p.fp, contentseen.Fingerprint(orig.Fingerprint)),
			res: exactResemblance, byDigest: true, orig: orig}, nil
	}
	ms, err := c.index.NearTx(tx, p.fp, c.radius(p))
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		v, err := c.verifyTx(tx, p, m)
		if err != nil || v != nil {
			return v, err
		}
	}
	return nil, nil
}

// radius is p's candidate radius: Options.K, or for a short text (fewer
// than Options.ShortFeatures distinct features) c.shortK.
func (c *Crawler) radius(p *page) int {
	return radiusOf(p.features, c.opts.ShortFeatures, c.k, c.shortK)
}

// radiusOf is the candidate radius of a text of features distinct
// features: k, or shortK for one of fewer than shortFeatures.
func radiusOf(features, shortFeatures, k, shortK int) int {
	if features < shortFeatures {
		return shortK
	}
	return k
}

// PairVerdict is what the judge says of two texts (JudgePair).
type PairVerdict struct {
	A, B        contentseen.Fingerprint
	Distance    int  // Hamming distance of the SimHashes
	Exact       bool // the same contentseen.TextDigest
	Resemblance contentseen.Resemblance
	// Radius is the candidate radius: k, or the short radius when either
	// text is short (the crawl meeting that one second looks that far).
	Radius int
	Short  bool
	// Verified: the sketches agree under the thresholds.
	Verified bool
	// Reason is reasonExact or reasonNear when the crawl would drop the
	// text it met second as a copy of the other, "" when it would store
	// both.
	Reason string
}

// JudgePair judges two texts (each as the crawl judges it: extracted, its
// headline stripped) with the crawl's rule: an exact copy, or within the
// candidate radius and verified by the sketches under th. f fingerprints
// and sketches as the crawl does (FingerprintSketch); k, shortK and
// shortFeatures are Options.K, ShortK and ShortFeatures. A text too short
// to fingerprint gives contentseen.ErrNotEnoughContent: the crawl stores
// such a page as thin and never judges it.
func JudgePair(f *contentseen.Fingerprinter, th contentseen.Thresholds, k, shortK, shortFeatures int, a, b string) (PairVerdict, error) {
	var v PairVerdict
	fa, na, ska, err := f.FingerprintSketch(a)
	if err != nil {
		return v, fmt.Errorf("first text: %w", err)
	}
	fb, nb, skb, err := f.FingerprintSketch(b)
	if err != nil {
		return v, fmt.Errorf("second text: %w", err)
	}
	v.A, v.B = fa, fb
	v.Distance = contentseen.Distance(fa, fb)
	v.Exact = contentseen.TextDigest(a) == contentseen.TextDigest(b)
	v.Radius = radiusOf(min(na, nb), shortFeatures, k, max(k, shortK))
	v.Short = min(na, nb) < shortFeatures
	v.Resemblance = contentseen.Compare(ska, skb)
	v.Verified = th.Verify(v.Resemblance)
	switch {
	case v.Exact:
		v.Reason = reasonExact
	case v.Distance <= v.Radius && v.Verified:
		v.Reason = reasonNear
	}
	return v, nil
}

// shortRadius is the short texts' radius with layout: the larger of K and
// ShortK, at most what the layout answers. A data directory whose layout
// answers less than the default ShortK (10x28: 9, chosen by layout auto
// above 16.8M expected pages; google16: 3) keeps working with the radius
// it can answer, said in the log, rather than being refused for a key it
// never set.
func (c *Crawler) shortRadius(layout contentseen.Layout) int {
	r := max(c.k, c.opts.ShortK)
	if c.opts.ShortFeatures > 0 && r > layout.MaxK() {
		c.opts.Logger.Info("short texts take the widest radius the index's layout answers", "short_k", r, "layout", layout.Name(), "radius", layout.MaxK())
		r = layout.MaxK()
	}
	return r
}

// exactResemblance is what an exact copy's texts have.
var exactResemblance = contentseen.Resemblance{Similarity: 1, Containment: 1, SizeRatio: 1}

// verifyTx compares p with candidate m: a verdict when their sketches
// agree, nil when not.
func (c *Crawler) verifyTx(tx *bolt.Tx, p *page, m contentseen.Match) (*verdict, error) {
	sk, exact, err := c.candidateSketchTx(tx, m.ID, p.digest)
	if err != nil {
		return nil, err
	}
	if exact {
		return &verdict{id: m.ID, reason: reasonExact, dist: m.Distance, res: exactResemblance}, nil
	}
	res := contentseen.Compare(p.sketch, sk)
	if !c.thresholds.Verify(res) {
		return nil, nil
	}
	return &verdict{id: m.ID, reason: reasonNear, dist: m.Distance, res: res}, nil
}

// candidateSketchTx returns the sketch of stored page id. A page stored
// before sketches has none: it is computed from its stored text, and
// exact reports whether that text has digest d (its stored digest was
// taken by an older version, over the text as it was).
func (c *Crawler) candidateSketchTx(tx *bolt.Tx, id uint64, d [16]byte) (sk contentseen.Sketch, exact bool, err error) {
	if b, ok := c.store.SketchTx(tx, id); ok {
		if err := sk.UnmarshalBinary(b); err != nil {
			return sk, false, fmt.Errorf("sketch of page %d: %w", id, err)
		}
		return sk, false, nil
	}
	sp, err := c.store.PageTextTx(tx, id)
	if err != nil {
		return sk, false, fmt.Errorf("near match %d: %w", id, err)
	}
	text := contentseen.StripTitle(sp.Text, sp.Title)
	return c.fper.Sketch(text), contentseen.TextDigest(text) == d, nil // the crawl's tokenizer
}
