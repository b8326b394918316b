package extract

// raceEnabled is set by race_test.go when built with -race.
var raceEnabled bool
