package contentseen

import "os"

// bigTests is set by SIMCRAWL_BIG=1. Tests that check a property over many
// fingerprints run by default at a size that takes every code path they
// check (several blocks per table, several merge steps, planted pairs) in
// seconds under the race detector, and at the size they were written for
// with SIMCRAWL_BIG=1 (README: "Tests").
var bigTests = os.Getenv("SIMCRAWL_BIG") == "1"

// testSize returns big with SIMCRAWL_BIG=1, else small.
func testSize(small, big int) int {
	if bigTests {
		return big
	}
	return small
}
