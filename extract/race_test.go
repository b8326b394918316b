//go:build race

package extract

// The race detector makes parsing about ten times slower; the TestQuality
// tests over hundreds of real pages skip under it (CI runs them again
// without -race).
func init() { raceEnabled = true }
