//go:build !unix

package extract

import "time"

// cpuTime is unavailable here; benchmarks then omit the per-CPU figures.
func cpuTime() time.Duration { return 0 }
