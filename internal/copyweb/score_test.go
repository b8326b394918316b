package copyweb

import "testing"

// A hand-made web: cluster 1 is an original with three copies, cluster 2 an
// original with one, and a rewrite and an index page to keep.
func scoreWeb() *Web {
	w := &Web{byID: map[string]*Page{}}
	for _, p := range []*Page{
		{ID: "o1", Kind: Original, Cluster: 1},
		{ID: "c1", Kind: Ads, Cluster: 1, Of: "o1"},
		{ID: "c2", Kind: Retitle, Cluster: 1, Of: "o1"},
		{ID: "c3", Kind: Chain, Cluster: 1, Of: "c2"},
		{ID: "o2", Kind: Original, Cluster: 2},
		{ID: "c4", Kind: Mirror, Cluster: 2, Of: "o2"},
		{ID: "r1", Kind: Rewrite, Cluster: 3},
		{ID: "i1", Kind: Index, Cluster: 4},
	} {
		if err := w.add(p); err != nil {
			panic(err)
		}
	}
	return w
}

func stored(id uint64) *Outcome  { return &Outcome{Stored: true, StoreID: id} }
func dropped(of string) *Outcome { return &Outcome{Dropped: true, DuplicateOf: of} }

func TestScore(t *testing.T) {
	for _, c := range []struct {
		name           string
		out            map[string]*Outcome
		tp, fp, fn, ms int
	}{
		{"all caught", map[string]*Outcome{"o1": stored(1), "c1": dropped("o1"), "c2": dropped("o1"), "c3": dropped("o1"),
			"o2": stored(2), "c4": dropped("o2"), "r1": stored(3), "i1": stored(4)}, 4, 0, 0, 0},
		{"copy kept first, original dropped as its copy", map[string]*Outcome{"c1": stored(1), "o1": dropped("c1"), "c2": dropped("c1"), "c3": dropped("o1"),
			"o2": stored(2), "c4": dropped("o2"), "r1": stored(3), "i1": stored(4)}, 4, 0, 0, 0},
		{"two copies kept beside the original", map[string]*Outcome{"o1": stored(1), "c1": stored(5), "c2": stored(6), "c3": dropped("c2"),
			"o2": stored(2), "c4": dropped("o2"), "r1": stored(3), "i1": stored(4)}, 2, 0, 2, 0},
		{"two copies kept, original dropped", map[string]*Outcome{"c1": stored(1), "o1": dropped("c1"), "c2": stored(6), "c3": dropped("c2"),
			"o2": stored(2), "c4": dropped("o2"), "r1": stored(3), "i1": stored(4)}, 3, 0, 1, 0},
		{"a copy dropped for another article, a rewrite and an original dropped", map[string]*Outcome{"o1": stored(1), "c1": dropped("o2"), "c2": dropped("o1"), "c3": dropped("o1"),
			"o2": dropped("o1"), "c4": stored(2), "r1": dropped("o1"), "i1": stored(4)}, 3, 3, 0, 0},
		{"pages never reached", map[string]*Outcome{"o1": stored(1), "o2": stored(2), "c4": dropped("o2")}, 1, 0, 0, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			tot := Score(scoreWeb(), c.out).Total
			if tot.TP != c.tp || tot.FP != c.fp || tot.FN != c.fn || tot.Missing != c.ms {
				t.Errorf("TP %d FP %d FN %d missing %d; want %d %d %d %d", tot.TP, tot.FP, tot.FN, tot.Missing, c.tp, c.fp, c.fn, c.ms)
			}
		})
	}
}
