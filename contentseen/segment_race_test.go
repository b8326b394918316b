//go:build race

package contentseen

func init() { raceEnabledSegment = true }
