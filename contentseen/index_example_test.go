package contentseen_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/simcrawl/simcrawl/contentseen"
)

// An index admits the first of two near-duplicate pages and reports the
// second as a duplicate of it; a page 4 bits away is new.
func ExampleIndex() {
	ctx := context.Background()
	idx := contentseen.NewMemIndex(contentseen.DefaultLayout())
	defer idx.Close()

	page1 := contentseen.Fingerprint(0x0f0f_1234_5678_9abc)
	page2 := page1 ^ 0b101   // 2 bits away: a near-duplicate
	page3 := page1 ^ 0xf0000 // 4 bits away: new

	for id, fp := range []contentseen.Fingerprint{page1, page2, page3} {
		m, found, err := idx.Seen(ctx, uint64(id+1), fp)
		if err != nil {
			log.Fatal(err)
		}
		if found {
			fmt.Printf("page %d: near-duplicate of page %d (distance %d)\n", id+1, m.ID, m.Distance)
		} else {
			fmt.Printf("page %d: new\n", id+1)
		}
	}
	fmt.Println("stored:", idx.Len())
	// Output:
	// page 1: new
	// page 2: near-duplicate of page 1 (distance 2)
	// page 3: new
	// stored: 2
}

// A persistent index in its own bbolt file keeps its fingerprints across
// restarts, and refuses to be reopened with another layout or scheme.
func ExampleOpenBolt() {
	dir, err := os.MkdirTemp("", "contentseen-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "index.db")
	ctx := context.Background()

	idx, err := contentseen.OpenBolt(path, contentseen.BoltOptions{Scheme: "words"})
	if err != nil {
		log.Fatal(err)
	}
	if _, _, err := idx.Seen(ctx, 1, 0xabcdef); err != nil {
		log.Fatal(err)
	}
	if err := idx.Close(); err != nil {
		log.Fatal(err)
	}

	idx, err = contentseen.OpenBolt(path, contentseen.BoltOptions{Scheme: "words"})
	if err != nil {
		log.Fatal(err)
	}
	ms, err := idx.Near(ctx, 0xabcdef^1, 3)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("after reopen: %d stored, nearest id %d at distance %d\n", idx.Len(), ms[0].ID, ms[0].Distance)
	if err := idx.Close(); err != nil {
		log.Fatal(err)
	}

	l, err := contentseen.LayoutByName("10x28")
	if err != nil {
		log.Fatal(err)
	}
	_, err = contentseen.OpenBolt(path, contentseen.BoltOptions{Layout: l, Scheme: "words"})
	fmt.Println("reopen with layout 10x28 refused:", err != nil)
	// Output:
	// after reopen: 1 stored, nearest id 1 at distance 1
	// reopen with layout 10x28 refused: true
}
