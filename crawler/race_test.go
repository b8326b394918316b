//go:build race

package crawler

// The TestQuality tests skip under -race (skipQuality).
func init() { raceEnabled = true }
