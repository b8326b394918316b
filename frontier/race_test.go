//go:build race

package frontier

// The race detector makes the WHATWG parser about ten times slower; tests
// that canonicalise thousands of real links sample them under -race.
func init() { raceEnabled = true }
