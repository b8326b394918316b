package contentseen

// raceEnabledSegment is set under -race (segment_race_test.go): tests
// that load gse's text dictionary skip then.
var raceEnabledSegment bool
