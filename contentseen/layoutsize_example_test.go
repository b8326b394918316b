package contentseen_test

import (
	"fmt"
	"log"

	"github.com/simcrawl/simcrawl/contentseen"
)

// ChooseLayout keeps 4x16, the smallest layout, while its 16-bit prefix
// returns at most 256 candidates per table, and takes more tables with
// longer prefixes beyond.
func ExampleChooseLayout() {
	for _, n := range []int64{1e6, 1e7, 1e8, 1e10} {
		l, err := contentseen.ChooseLayout(3, n)
		if err != nil {
			log.Fatal(err)
		}
		c := l.Cost(n)
		fmt.Printf("%.0e: %-8s %2d tables, %4.1fx space, %5.1f candidates per query\n", float64(n), l, c.Tables, c.Space, c.Candidates)
	}
	l, err := contentseen.ChooseLayout(5, 1e6)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("k=5, 1e+06: %s, %d tables\n", l, l.Tables())
	// Output:
	// 1e+06: 4x16      4 tables,  1.0x space,  61.0 candidates per query
	// 1e+07: 4x16      4 tables,  1.0x space, 610.4 candidates per query
	// 1e+08: 10x28    10 tables,  2.5x space,  37.3 candidates per query
	// 1e+10: google16 16 tables,  4.0x space, 596.0 candidates per query
	// k=5, 1e+06: k5/10-9-9-9-9-9-9/lead2, 21 tables
}
