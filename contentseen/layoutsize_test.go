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

// For k > 3 the choice is among generated layouts; the expected ones are
// worked out by hand in the comments.
func TestChooseLayoutGenerated(t *testing.T) {
	for _, tc := range []struct {
		k        int
		expected int64
		want     string
	}{
		// 5 blocks, one leads: 5 tables of 12-13 bits, 1M/4096 = 244 per table.
		{4, 1e6, "k4/13-13-13-13-12/lead1"},
		// 12 bits are too few for 10M (2,441); one block of 6 or 7 leading
		// gives 9-10 bits; two of six blocks give 20-22 bits in 15 tables.
		{4, 1e7, "k4/11-11-11-11-10-10/lead2"},
		// Tiny: the fewest tables, k+1 blocks.
		{6, 1000, "k6/10-9-9-9-9-9-9/lead1"},
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

// Properties of every choice: the layout guarantees k, stays within the
// table bound, keeps the candidates under the bound whenever any
// generated layout of as many tables or fewer could, and a bigger index
// never gets fewer tables.
func TestChooseLayoutProperties(t *testing.T) {
	for k := range 12 {
		var all []Layout
		if k > 3 {
			var err error
			if all, err = generatedLayouts(k); err != nil {
				t.Fatal(err)
			}
		}
		prevTables := 0
		for e := 0; e <= 12; e++ {
			n := int64(math.Pow(10, float64(e)))
			l, err := ChooseLayout(k, n)
			if err != nil {
				t.Fatalf("ChooseLayout(%d, %d): %v", k, n, err)
			}
			if l.K() < k {
				t.Errorf("ChooseLayout(%d, %d) = %s, which guarantees only k <= %d", k, n, l.Name(), l.K())
			}
			if l.Tables() > maxChosenTables {
				t.Errorf("ChooseLayout(%d, %d) = %s: %d tables", k, n, l.Name(), l.Tables())
			}
			if l.Tables() < prevTables {
				t.Errorf("ChooseLayout(%d, %d) = %s: %d tables, fewer than for %d", k, n, l.Name(), l.Tables(), n/10)
			}
			prevTables = l.Tables()
			if k <= 3 {
				continue
			}
			got := l.Cost(n).WorstTable
			for _, o := range all {
				oc := o.Cost(n).WorstTable
				if got > MaxCandidatesPerTable && oc <= MaxCandidatesPerTable {
					t.Errorf("ChooseLayout(%d, %d) = %s (%.0f candidates per table) though %s fits (%.0f)", k, n, l.Name(), got, o.Name(), oc)
				}
				if got <= MaxCandidatesPerTable && oc <= MaxCandidatesPerTable && o.Tables() < l.Tables() {
					t.Errorf("ChooseLayout(%d, %d) = %s (%d tables) though %s fits with %d", k, n, l.Name(), l.Tables(), o.Name(), o.Tables())
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
