package contentseen_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/simcrawl/simcrawl/contentseen"
)

// A page, the same page with one word changed, and an unrelated page. The
// edit moves the fingerprint a few bits (more on short pages like this
// one: every feature carries more of the vote), the unrelated page about
// half of the 64; a near-empty page is refused.
func ExampleFingerprinter() {
	f, err := contentseen.NewFingerprinter(contentseen.Options{}) // word features, the default
	if err != nil {
		log.Fatal(err)
	}
	page := `The lighthouse on the northern cape was built in 1868 from granite quarried
on the island. Its lamp, once fuelled by whale oil and later by paraffin, was
converted to electricity in 1926 and automated in 1981, when the last keeper
left. Visitors can climb the 142 steps to the gallery from April to October,
and the former keeper's cottage now houses a small museum about shipwrecks,
signal codes and the families who tended the light through storms and wars.`
	edited := page[:len(page)-len("through storms and wars.")] + "through storms and wartime."
	other := `Our bakery opens at seven every morning with sourdough loaves, rye bread,
cinnamon rolls and seasonal fruit tarts. Orders for birthday cakes should be
placed three days in advance, and gluten-free options are available on request.`

	a, n, err := f.Fingerprint(page)
	if err != nil {
		log.Fatal(err)
	}
	b, _, err := f.Fingerprint(edited)
	if err != nil {
		log.Fatal(err)
	}
	c, _, err := f.Fingerprint(other)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("features:", n)
	fmt.Println("distance to edited:", contentseen.Distance(a, b))
	fmt.Println("distance to other:", contentseen.Distance(a, c))

	_, n, err = f.Fingerprint("Loading…")
	fmt.Println("near-empty page:", errors.Is(err, contentseen.ErrNotEnoughContent), n, "feature")
	fmt.Println("scheme:", f.Options())
	// Output:
	// features: 46
	// distance to edited: 4
	// distance to other: 23
	// near-empty page: true 1 feature
	// scheme: words,min=8,tok=2
}
