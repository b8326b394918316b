package copyweb

import (
	"errors"
	"fmt"
	"io"

	"github.com/simcrawl/simcrawl/contentseen"
)

// A CurveRow counts, for the pairs whose judged side (B) has features in
// [MinFeatures, MaxFeatures), what the two-stage rule does at radius K:
// copies dropped (exact, or within K bits and verified), copies kept, and
// pairs to keep that were dropped; Within is the pairs to keep within K
// bits (candidates the sketch had to refuse).
type CurveRow struct {
	MinFeatures, MaxFeatures int
	K                        int
	Copies, Caught           int
	Keeps, FalseDrops        int
	Within                   int
}

// Recall is Caught/Copies (1 with no copies).
func (r CurveRow) Recall() float64 {
	if r.Copies == 0 {
		return 1
	}
	return float64(r.Caught) / float64(r.Copies)
}

// RadiusCurve judges every pair with f and th at each radius of ks, per
// bucket of B's feature count (bounds: ascending bucket edges, the last
// bucket open). Pairs with a side too short to fingerprint are left out.
func RadiusCurve(pairs []TextPair, f *contentseen.Fingerprinter, th contentseen.Thresholds, bounds, ks []int) ([]CurveRow, error) {
	type judged struct {
		bucket, dist   int
		exact, verifed bool
		copy           bool
	}
	var js []judged
	for _, p := range pairs {
		fa, _, ska, err := f.FingerprintSketch(p.A)
		if errors.Is(err, contentseen.ErrNotEnoughContent) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("copyweb: %w", err)
		}
		fb, nb, skb, err := f.FingerprintSketch(p.B)
		if errors.Is(err, contentseen.ErrNotEnoughContent) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("copyweb: %w", err)
		}
		b := 0
		for b < len(bounds) && nb >= bounds[b] {
			b++
		}
		js = append(js, judged{bucket: b, dist: contentseen.Distance(fa, fb),
			exact:   contentseen.TextDigest(p.A) == contentseen.TextDigest(p.B),
			verifed: th.Verify(contentseen.Compare(ska, skb)), copy: p.Copy})
	}
	var rows []CurveRow
	for b := 0; b <= len(bounds); b++ {
		lo, hi := 0, -1
		if b > 0 {
			lo = bounds[b-1]
		}
		if b < len(bounds) {
			hi = bounds[b]
		}
		for _, k := range ks {
			r := CurveRow{MinFeatures: lo, MaxFeatures: hi, K: k}
			for _, j := range js {
				if j.bucket != b {
					continue
				}
				dropped := j.exact || j.dist <= k && j.verifed
				if j.copy {
					r.Copies++
					if dropped {
						r.Caught++
					}
					continue
				}
				r.Keeps++
				if dropped {
					r.FalseDrops++
				}
				if j.dist <= k {
					r.Within++
				}
			}
			rows = append(rows, r)
		}
	}
	return rows, nil
}

// WriteCurve prints rows as a table.
func WriteCurve(w io.Writer, rows []CurveRow) error {
	if _, err := fmt.Fprintf(w, "%9s %3s %6s %6s %6s %6s %6s %6s\n", "features", "k", "copies", "caught", "recall", "keeps", "within", "falsedrop"); err != nil {
		return err
	}
	for _, r := range rows {
		hi := "+"
		if r.MaxFeatures >= 0 {
			hi = fmt.Sprint(r.MaxFeatures)
		}
		if _, err := fmt.Fprintf(w, "%4d-%-4s %3d %6d %6d %6.3f %6d %6d %6d\n", r.MinFeatures, hi, r.K, r.Copies, r.Caught, r.Recall(), r.Keeps, r.Within, r.FalseDrops); err != nil {
			return err
		}
	}
	return nil
}
