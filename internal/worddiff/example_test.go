package worddiff_test

import (
	"fmt"
	"os"

	"github.com/simcrawl/simcrawl/internal/worddiff"
)

func ExampleDiff() {
	runs := worddiff.Diff("Updated 10:32 today", "Updated 11:05 today")
	worddiff.Write(os.Stdout, runs, false)
	same, del, ins := worddiff.Words(runs)
	fmt.Printf("%d same, %d removed, %d added\n", same, del, ins)
	// Output:
	// Updated [-10-]{+11+}:[-32-]{+05+} today
	// 2 same, 2 removed, 2 added
}
