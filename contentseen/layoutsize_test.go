package contentseen

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

func TestChooseLayoutBuiltIn(t *testing.T) {
	for _, tc := range []struct {
		k        int
		expected int64
		want     string
	}{
		{3, 0, Layout4x16},
		{3, 1e6, Layout4x16},
		{3, 1e7, Layout4x16},
		{3, 1 << 24, Layout4x16}, // 256 candidates per table: still fits
		{3, 1<<24 + 1, Layout10x28},
		{3, 1e8, Layout10x28},
		{3, 1e9, Layout10x28},
		{3, 1 << 32, Layout10x28},
		{3, 1<<32 + 1, LayoutGoogle16},
		{3, 1e13, LayoutGoogle16}, // nothing fits: the fewest candidates
		{0, 1e6, Layout4x16},
		{2, 1e8, Layout10x28},
	} {
		l, err := ChooseLayout(tc.k, tc.expected)
		if err != nil {
			t.Errorf("ChooseLayout(%d, %d): %v", tc.k, tc.expected, err)
			continue
		}
		if l.Name() != tc.want {
			t.Errorf("ChooseLayout(%d, %d) = %s, want %s", tc.k, tc.expected, l.Name(), tc.want)
		}
	}
}

// For k > 3 the choice is the cheapest query (QueryCost: rangeCandidates
// per range plus the candidates) among layouts of at most 10 tables that
// answer k, one prefix per table or multi-probe; the expected ones are
// worked out by hand in the comments (costs in thousands of candidates).
func TestChooseLayoutGenerated(t *testing.T) {
	for _, tc := range []struct {
		k        int
		expected int64
		want     string
	}{
		// 5 blocks, one leads: 5 ranges of 12-13 bits, 1M/4096 = 244 per
		// table (2.5); 4x16 multi-probe reads 68 ranges (18.4).
		{4, 1e6, "k4/13-13-13-13-12/lead1"},
		// The same 5 tables at 10M (8.6) against 3 tables of 21-22 bits
		// read at 67 prefixes (17.4); the 15 tables of two 11-bit blocks
		// leading, chosen before, are more than 10.
		{4, 1e7, "k4/13-13-13-13-12/lead1"},
		// Tiny: the fewest tables, k+1 blocks.
		{6, 1000, "k6/10-9-9-9-9-9-9/lead1"},
		// The crawler's radius: 4x16 reads 68 ranges, 10,376 candidates at
		// 10M (27.8) where 8 tables of 8-bit prefixes compare 312,500
		// (314.5) and k2/22-21-21/lead1 reads 718 ranges (186.6); 36
		// tables before.
		{7, 1e7, Layout4x16},
		{7, 1e6, Layout4x16},                 // 18.4 against 33.3 for 8 tables of 8 bits
		{7, 1e5, "k7/8-8-8-8-8-8-8-8/lead1"}, // 5.2 against 17.5
		{7, 1e9, "k2/22-21-21/lead1"},        // 465.6 against 1,055
	} {
		l, err := ChooseLayout(tc.k, tc.expected)
		if err != nil {
			t.Errorf("ChooseLayout(%d, %d): %v", tc.k, tc.expected, err)
			continue
		}
		if l.Name() != tc.want {
			t.Errorf("ChooseLayout(%d, %d) = %s, want %s", tc.k, tc.expected, l.Name(), tc.want)
		}
	}
}

// Properties of every choice: the layout answers k; for k > 3 it has at
// most maxWideTables tables and no layout of at most that many tables
// that answers k (generated for k or a smaller K, or built in) has a
// cheaper query; for k <= 3 a bigger index never gets fewer tables.
func TestChooseLayoutProperties(t *testing.T) {
	builtin := func(name string) Layout {
		l, err := LayoutByName(name)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	for k := range 12 {
		var all []Layout
		if k > 3 {
			all = []Layout{builtin(Layout4x16), builtin(Layout10x28), builtin(LayoutGoogle16)}
			for kk := 0; kk <= k; kk++ {
				ls, err := generatedLayouts(kk, maxChosenTables)
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, ls...)
			}
		}
		prevTables := 0
		for e := 0; e <= 12; e++ {
			n := int64(math.Pow(10, float64(e)))
			l, err := ChooseLayout(k, n)
			if err != nil {
				t.Fatalf("ChooseLayout(%d, %d): %v", k, n, err)
			}
			if l.MaxK() < k {
				t.Errorf("ChooseLayout(%d, %d) = %s, which answers only k <= %d", k, n, l.Name(), l.MaxK())
			}
			if k <= 3 {
				if l.Tables() < prevTables {
					t.Errorf("ChooseLayout(%d, %d) = %s: %d tables, fewer than for %d", k, n, l.Name(), l.Tables(), n/10)
				}
				prevTables = l.Tables()
				continue
			}
			if l.Tables() > maxWideTables {
				t.Errorf("ChooseLayout(%d, %d) = %s: %d tables", k, n, l.Name(), l.Tables())
			}
			cost := func(l Layout) float64 {
				r, c := l.QueryCost(n, k)
				return float64(r)*rangeCandidates + c
			}
			for _, o := range all {
				if o.Tables() <= maxWideTables && o.MaxK() >= k && cost(o) < cost(l) {
					t.Errorf("ChooseLayout(%d, %d) = %s (cost %.0f) though %s answers k for %.0f", k, n, l.Name(), cost(l), o.Name(), cost(o))
				}
			}
		}
	}
}

func TestChooseLayoutRefuses(t *testing.T) {
	for _, tc := range []struct {
		k        int
		expected int64
	}{{-1, 1e6}, {64, 1e6}, {3, -1}} {
		if l, err := ChooseLayout(tc.k, tc.expected); err == nil {
			t.Errorf("ChooseLayout(%d, %d) = %s, want an error", tc.k, tc.expected, l.Name())
		}
	}
}

func TestLayoutCost(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		n                    int64
		tables, minP, maxP   int
		space, cands, oneTbl float64
	}{
		{Layout4x16, 1 << 20, 4, 16, 16, 1, 64, 16},
		{Layout10x28, 1 << 28, 10, 24, 28, 2.5, 4*1 + 6*16, 16},
		{LayoutGoogle16, 1 << 30, 16, 28, 28, 4, 64, 4},
	} {
		l, err := LayoutByName(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		c := l.Cost(tc.n)
		want := LayoutCost{Tables: tc.tables, MinPrefix: tc.minP, MaxPrefix: tc.maxP, Space: tc.space, Candidates: tc.cands, WorstTable: tc.oneTbl}
		if c != want {
			t.Errorf("%s.Cost(%d) = %+v, want %+v", tc.name, tc.n, c, want)
		}
	}
}

// The trade-off table in doc.go starts each row with the columns Cost
// computes; the measured columns after them are not checked.
func TestDocTradeoffTable(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{Layout4x16, Layout10x28, LayoutGoogle16} {
		l, err := LayoutByName(name)
		if err != nil {
			t.Fatal(err)
		}
		row := "//\t" + tradeoffRow(l)
		if !strings.Contains(string(doc), row) {
			t.Errorf("doc.go lacks the trade-off row\n%s", row)
		}
	}
}

// tradeoffRow formats the computed columns of l's row in doc.go's table:
// name, tables, prefix bits, space relative to 4x16, candidates per query
// at 1M / 10M / 100M / 1G.
func tradeoffRow(l Layout) string {
	c := l.Cost(0)
	prefix := fmt.Sprint(c.MinPrefix)
	if c.MaxPrefix != c.MinPrefix {
		prefix = fmt.Sprintf("%d-%d", c.MinPrefix, c.MaxPrefix)
	}
	var cands []string
	for _, n := range []int64{1e6, 1e7, 1e8, 1e9} {
		cands = append(cands, roughCount(l.Cost(n).Candidates))
	}
	return fmt.Sprintf("%-9s %-6d %-6s %-5s %-29s", l.Name(), c.Tables, prefix, fmt.Sprintf("%gx", c.Space), strings.Join(cands, " / "))
}

// roughCount writes x with two significant digits below 10 and as a whole
// number with thousands separators above.
func roughCount(x float64) string {
	if x < 10 {
		return fmt.Sprintf("%.2g", x)
	}
	s := fmt.Sprintf("%.0f", x)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func TestPrintTradeoffRows(t *testing.T) {
	if !testing.Verbose() {
		t.Skip("prints the rows for doc.go with -v")
	}
	for _, name := range []string{Layout4x16, Layout10x28, LayoutGoogle16} {
		l, err := LayoutByName(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%q", tradeoffRow(l))
	}
}

func TestQueryCost(t *testing.T) {
	l := DefaultLayout()
	for _, tc := range []struct {
		k, ranges int
		cands     float64
	}{
		{3, 4, 4 * 1e7 / 65536},
		{7, 4 * 17, 4 * 17 * 1e7 / 65536},
		{10, 4 * 137, 4 * 137 * 1e7 / 65536},
	} {
		r, c := l.QueryCost(1e7, tc.k)
		if r != tc.ranges || math.Abs(c-tc.cands) > 1e-6*tc.cands {
			t.Errorf("4x16 QueryCost(1e7, %d) = %d, %.1f; want %d, %.1f", tc.k, r, c, tc.ranges, tc.cands)
		}
	}
}
