package contentseen_test

import (
	"fmt"
	"log"

	"github.com/simcrawl/simcrawl/contentseen"
)

// ChooseLayout keeps 4x16, the smallest layout, while its 16-bit prefix
// returns at most 256 candidates per table, and takes more tables with
// longer prefixes beyond. For a judge's wider radius it weighs the query's
// prefix ranges and candidates, multi-probe included: at k=7 and 10M,
// 4x16's 68 ranges beat every layout of at most 10 tables.
func ExampleChooseLayout() {
	for _, n := range []int64{1e6, 1e7, 1e8, 1e10} {
		l, err := contentseen.ChooseLayout(3, n)
		if err != nil {
			log.Fatal(err)
		}
		c := l.Cost(n)
		fmt.Printf("%.0e: %-8s %2d tables, %4.1fx space, %5.1f candidates per query\n", float64(n), l, c.Tables, c.Space, c.Candidates)
	}
	for _, k := range []int{5, 7} {
		l, err := contentseen.ChooseLayout(k, 1e7)
		if err != nil {
			log.Fatal(err)
		}
		ranges, candidates := l.QueryCost(1e7, k)
		fmt.Printf("k=%d, 1e+07: %s, %d tables, %d ranges, %.0f candidates per query\n", k, l, l.Tables(), ranges, candidates)
	}
	// Output:
	// 1e+06: 4x16      4 tables,  1.0x space,  61.0 candidates per query
	// 1e+07: 4x16      4 tables,  1.0x space, 610.4 candidates per query
	// 1e+08: 10x28    10 tables,  2.5x space,  37.3 candidates per query
	// 1e+10: google16 16 tables,  4.0x space, 596.0 candidates per query
	// k=5, 1e+07: k2/22-21-21/lead1, 3 tables, 67 ranges, 265 candidates per query
	// k=7, 1e+07: 4x16, 4 tables, 68 ranges, 10376 candidates per query
}
