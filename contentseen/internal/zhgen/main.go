// Command zhgen writes contentseen's embedded Chinese data (zhdict.bin)
// from gse's dictionary and OpenCC's t2s tables; `go generate
// ./contentseen/` runs it. TestZhDataUpToDate checks that the committed
// file is what it writes.
package main

import (
	"fmt"
	"os"

	"github.com/simcrawl/simcrawl/contentseen/internal/zhdict/zhsource"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: zhgen OUTPUT")
		os.Exit(2)
	}
	data, err := zhsource.Build()
	if err == nil {
		err = os.WriteFile(os.Args[1], data, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "zhgen:", err)
		os.Exit(1)
	}
}
