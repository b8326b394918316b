//go:build unix

package extract

import (
	"syscall"
	"time"
)

// cpuTime is the process's user+system CPU time so far. Benchmarks report
// throughput per CPU second too, because on a shared machine wall-clock
// rates measure the neighbours as much as the code.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
