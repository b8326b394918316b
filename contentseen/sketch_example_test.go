package contentseen_test

import (
	"fmt"
	"strings"

	"github.com/simcrawl/simcrawl/contentseen"
)

// An article, the same article with a sponsored line and two comments
// added, and another article on the same subject. The padded copy keeps
// most of the shingles and contains all of the original; the other
// article shares almost none. Verify says which is a copy.
func ExampleCompare() {
	article := `The lighthouse on the northern cape was built in 1868 from granite quarried
on the island. Its lamp, once fuelled by whale oil and later by paraffin, was
converted to electricity in 1926 and automated in 1981, when the last keeper
left. Visitors can climb the 142 steps to the gallery from April to October.`
	padded := article + `
Sponsored: book your island ferry tickets online and save ten percent.
Comment: we climbed it last summer, the view was worth every step.`
	other := `The harbour light at the southern point dates from 1902 and was
rebuilt after a storm in 1953. It is closed to visitors, but the coastal path
passes below it and a small display in the village hall tells its history.`

	a := contentseen.SketchOf(article)
	th := contentseen.DefaultThresholds()
	for _, c := range []struct{ name, text string }{{"padded copy", padded}, {"other article", other}} {
		r := contentseen.Compare(a, contentseen.SketchOf(c.text))
		fmt.Printf("%-13s similarity %.1f, containment %.1f, copy: %v\n", c.name,
			r.Similarity, r.Containment, th.Verify(r))
	}
	fmt.Println(strings.Repeat("-", 10))
	fmt.Println(contentseen.TextDigest("Prices rose 5%.") == contentseen.TextDigest("prices rose 5 %"))
	// Output:
	// padded copy   similarity 0.6, containment 1.0, copy: true
	// other article similarity 0.0, containment 0.0, copy: false
	// ----------
	// true
}
