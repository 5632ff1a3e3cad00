//go:build race

package faults

// raceEnabled builds the exporter under test with -race when the suite
// itself runs with -race, so the soak also hunts data races in the binary.
const raceEnabled = true
