//go:build race

package copyweb

// The race detector makes a crawl of the corpus web minutes long; the
// quality tests run in CI's second pass, without -race.
func init() { raceEnabled = true }
