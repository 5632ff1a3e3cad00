//go:build race

package tracker

// raceEnabled: under -race every schedule costs several times more, so the
// seeded schedules run a thousand instead of two thousand.
const raceEnabled = true
