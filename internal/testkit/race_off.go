//go:build !race

package testkit

// raceEnabled tells a test binary built with -race.
const raceEnabled = false
