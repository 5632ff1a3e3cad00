//go:build race

package faults

// raceEnabled tells a suite run with -race: the soak is shorter then (the
// exporter it runs is built with -race too, testkit.ExporterBinaryAsTests).
const raceEnabled = true
