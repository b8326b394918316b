package contentseen

import (
	"math/bits"
	"testing"
)

func TestBuiltinLayouts(t *testing.T) {
	for _, tc := range []struct {
		name           string
		k, tables      int
		minPre, maxPre int
	}{
		{Layout4x16, 3, 4, 16, 16},
		{Layout10x28, 3, 10, 24, 28},
		{LayoutGoogle16, 3, 16, 28, 28},
	} {
		l, err := LayoutByName(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if l.Name() != tc.name || l.K() != tc.k || l.Tables() != tc.tables {
			t.Errorf("%s: name %q, K %d, Tables %d; want %q, %d, %d", tc.name, l.Name(), l.K(), l.Tables(), tc.name, tc.k, tc.tables)
		}
		for tb := range l.Tables() {
			if p := l.PrefixBits(tb); p < tc.minPre || p > tc.maxPre {
				t.Errorf("%s: PrefixBits(%d) = %d, want %d..%d", tc.name, tb, p, tc.minPre, tc.maxPre)
			}
		}
	}
	if DefaultLayout().Name() != Layout4x16 {
		t.Errorf("DefaultLayout() = %s, want %s", DefaultLayout().Name(), Layout4x16)
	}
}

func TestNewLayoutRefuses(t *testing.T) {
	for _, tc := range []struct {
		k, lead int
		blocks  []int
	}{
		{20, 1, []int{16, 16, 16, 16}},    // 5 of 16 lead bits may differ: 6,885 prefixes per table
		{12, 3, []int{32, 32}},            // lead 3 > 2 blocks
		{3, 5, []int{16, 12, 12, 12, 12}}, // lead 5 leaves nothing to compare
		{1, 1, []int{16, 16, 16}},         // widths sum to 48
		{1, 1, []int{32, 0, 32}},          // empty block
		{-1, 1, []int{64}},
		{0, 0, []int{64}},
	} {
		if l, err := NewLayout(tc.k, tc.blocks, tc.lead); err == nil {
			t.Errorf("NewLayout(%d, %v, %d) = %s, want error", tc.k, tc.blocks, tc.lead, l.Name())
		}
	}
}

// TestProbeRadius checks ProbeRadius against every way of spreading k
// differing bits over the blocks: the largest, over the spreads, of the
// smallest sum over a table's lead blocks.
func TestProbeRadius(t *testing.T) {
	for nb := 1; nb <= 6; nb++ {
		blocks := make([]int, nb)
		for i := range blocks {
			blocks[i] = 64 / nb
		}
		blocks[0] += 64 - nb*(64/nb)
		for lead := 1; lead <= nb; lead++ {
			for k := 0; k <= 12; k++ {
				l, err := NewLayout(k, blocks, lead)
				if err != nil {
					continue // too many prefixes per table
				}
				want := 0
				spread := make([]int, nb)
				var rec func(b, left int)
				rec = func(b, left int) {
					if b == nb-1 {
						spread[b] = left
						least := 64
						for _, pick := range combinations(nb, lead) {
							sum := 0
							for _, i := range pick {
								sum += spread[i]
							}
							least = min(least, sum)
						}
						want = max(want, least)
						return
					}
					for d := 0; d <= left; d++ {
						spread[b] = d
						rec(b+1, left-d)
					}
				}
				rec(0, k)
				if got := l.ProbeRadius(k); got != want {
					t.Errorf("%s: ProbeRadius(%d) = %d, want %d", l.Name(), k, got, want)
				}
				if k <= nb-lead && want != 0 {
					t.Errorf("%s: one prefix per table should do at k=%d", l.Name(), k)
				}
			}
		}
	}
	masks := probeMasks(16, 2)
	if len(masks) != 1+16+120 || masks[0] != 0 {
		t.Fatalf("probeMasks(16, 2): %d masks, first %#x; want 137, first 0", len(masks), masks[0])
	}
	seen := map[uint64]bool{}
	for _, m := range masks {
		if seen[m] || bits.OnesCount64(m) > 2 || m<<16 != 0 {
			t.Errorf("probeMasks(16, 2): bad or repeated mask %#x", m)
		}
		seen[m] = true
	}
}

func TestLayoutByNameRoundTrip(t *testing.T) {
	for _, l := range testLayouts(t) {
		m, err := LayoutByName(l.Name())
		if err != nil {
			t.Fatalf("LayoutByName(%q): %v", l.Name(), err)
		}
		if m.Name() != l.Name() || m.K() != l.K() || m.Tables() != l.Tables() {
			t.Errorf("LayoutByName(%q) = %s k=%d tables=%d", l.Name(), m.Name(), m.K(), m.Tables())
		}
	}
	for _, bad := range []string{"", "5x13", "k3/16-16/lead", "k3/a-b/lead1"} {
		if _, err := LayoutByName(bad); err == nil {
			t.Errorf("LayoutByName(%q) succeeded, want error", bad)
		}
	}
}

// TestPermutationsArePermutations checks that each table moves every bit
// exactly once and that its prefix is made of whole leading blocks.
func TestPermutationsArePermutations(t *testing.T) {
	for _, l := range testLayouts(t) {
		seen := map[[64]int]bool{}
		for tb := range l.Tables() {
			var where [64]int
			used := uint64(0)
			for b := range 64 {
				p := l.Permute(tb, 1<<uint(b))
				if bits.OnesCount64(p) != 1 {
					t.Fatalf("%s table %d: bit %d maps to %#x", l.Name(), tb, b, p)
				}
				used |= p
				where[b] = bits.TrailingZeros64(p)
			}
			if used != ^uint64(0) {
				t.Errorf("%s table %d: permuted bits %#x, want all", l.Name(), tb, used)
			}
			if seen[where] {
				t.Errorf("%s table %d repeats another table", l.Name(), tb)
			}
			seen[where] = true
		}
	}
}

func FuzzPermuteRoundTrip(f *testing.F) {
	f.Add(uint8(0), uint8(0), uint64(0))
	f.Add(uint8(1), uint8(7), uint64(0x0123456789abcdef))
	f.Add(uint8(2), uint8(15), ^uint64(0))
	layouts := testLayouts(f)
	f.Fuzz(func(t *testing.T, li, ti uint8, v uint64) {
		l := layouts[int(li)%len(layouts)]
		tb := int(ti) % l.Tables()
		fp := Fingerprint(v)
		p := l.Permute(tb, fp)
		if got := l.Unpermute(tb, p); got != fp {
			t.Fatalf("%s table %d: Unpermute(Permute(%v)) = %v", l.Name(), tb, fp, got)
		}
		if bits.OnesCount64(p) != bits.OnesCount64(v) {
			t.Fatalf("%s table %d: Permute(%v) = %#x changes the popcount", l.Name(), tb, fp, p)
		}
		if back := l.Permute(tb, l.Unpermute(tb, v)); back != v {
			t.Fatalf("%s table %d: Permute(Unpermute(%#x)) = %#x", l.Name(), tb, v, back)
		}
	})
}
