package redistest

import (
	"flag"
	"runtime"
	"strconv"
)

// WaitingParallel sets -test.parallel to n (at least GOMAXPROCS) unless the
// command line gave it. Call it from TestMain, before m.Run, in a package
// whose parallel tests spend their time waiting on servers and processes
// (a cluster's start, leases, restarts, dial retries) rather than
// computing: -parallel defaults to GOMAXPROCS, which on a 2-core machine
// runs two such waits at a time.
func WaitingParallel(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if given {
		return
	}
	if err := flag.Set("test.parallel", strconv.Itoa(max(n, runtime.GOMAXPROCS(0)))); err != nil {
		panic(err) // only when the testing package's flags are not registered: not from TestMain
	}
}
