package contentseen_test

import (
	"context"
	"fmt"
	"log"

	"github.com/simcrawl/simcrawl/contentseen"
)

// Two workers judge pages through a shared index: the first page is
// claimed, stored and confirmed; a copy of it fetched by another worker is
// dropped as its copy; another article is claimed.
func ExampleJudge() {
	ctx := context.Background()
	idx, err := contentseen.NewSharedMem(contentseen.SharedOptions{K: 7})
	if err != nil {
		log.Fatal(err)
	}
	defer idx.Close()
	f, err := contentseen.NewFingerprinter(contentseen.Options{})
	if err != nil {
		log.Fatal(err)
	}
	entry := func(id, text string) contentseen.Entry {
		fp, _, sk, err := f.FingerprintSketch(text)
		if err != nil {
			log.Fatal(err)
		}
		return contentseen.Entry{ID: id, URL: "https://example.test/" + id, Fingerprint: fp,
			Digest: contentseen.TextDigest(text), Sketch: sk}
	}
	// The crawler's judge: the same text, or sketches that verify.
	th := contentseen.DefaultThresholds()
	judge := func(e contentseen.Entry) string {
		v, err := contentseen.Judge(ctx, idx, e, func(c contentseen.Entry) bool {
			return c.Digest == e.Digest || th.Verify(contentseen.Compare(e.Sketch, c.Sketch))
		})
		if err != nil {
			log.Fatal(err)
		}
		switch {
		case v.Copy != nil:
			return "drop: copy of " + v.Copy.ID
		case v.Wait != nil:
			return "wait for " + v.Wait.ID
		}
		// ... the worker stores the page in its data directory, then:
		if err := idx.Confirm(ctx, v.Seq, e.ID); err != nil {
			log.Fatal(err)
		}
		return "stored"
	}
	article := `The harbour bridge reopened on Monday after eight months of repairs to its
steel cables and deck, the city's transport office said. Engineers replaced
forty of the suspension cables, resurfaced the roadway and added a protected
lane for bicycles on the eastern side. Traffic had been diverted through the
tunnel since March, adding twenty minutes to commutes at peak hours.`
	fmt.Println("worker-a/1:", judge(entry("worker-a/1", article)))
	fmt.Println("worker-b/7:", judge(entry("worker-b/7", article)))
	fmt.Println("worker-b/8:", judge(entry("worker-b/8", `The riverside library reopened on Monday
after eight months of work on its roof and reading rooms, the city's culture
office said. Builders replaced the slate tiles, restored the oak shelves and
added a children's corner with picture books on the eastern side. Readers had
used the school hall since March, with shorter opening hours at weekends.`)))
	// Output:
	// worker-a/1: stored
	// worker-b/7: drop: copy of worker-a/1
	// worker-b/8: stored
}
