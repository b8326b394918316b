package contentseen_test

import (
	"context"
	"fmt"
	"log"

	"github.com/simcrawl/simcrawl/contentseen"
)

// A batch of new fingerprints is joined against a stored set split into two
// partitions: every pair within k=3 bits is reported once.
func ExampleJoinPartitions() {
	batch := []uint64{1, 2}
	batchFPs := []contentseen.Fingerprint{0x0f0f_1234_5678_9abc, 0xffff_0000_ffff_0000}
	j, err := contentseen.NewJoiner(contentseen.DefaultLayout(), 3, batch, batchFPs)
	if err != nil {
		log.Fatal(err)
	}
	stored := []uint64{10, 11, 12, 13}
	storedFPs := []contentseen.Fingerprint{
		0x0f0f_1234_5678_9abc ^ 0b101,   // 2 bits from batch 1
		0x1234_5678_9abc_def0,           // far from both
		0xffff_0000_ffff_0000,           // batch 2 itself
		0x0f0f_1234_5678_9abc ^ 0xf0000, // 4 bits from batch 1: too far
	}
	parts := contentseen.SplitSlices(stored, storedFPs, 2)
	err = contentseen.JoinPartitions(context.Background(), j, parts, 2, func(p contentseen.Pair) error {
		fmt.Printf("batch %d ~ stored %d (distance %d)\n", p.BatchID, p.StoredID, p.Distance)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// batch 1 ~ stored 10 (distance 2)
	// batch 2 ~ stored 12 (distance 0)
}
