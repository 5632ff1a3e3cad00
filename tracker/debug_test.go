package tracker

import (
	"flag"
	"testing"
)

var debugCase = flag.String("tracker.case", "", "feature case of TestOneSeed (TestScenarioPerFeature's names)")

var seedBase = flag.Uint64("tracker.seedbase", 0, "first seed of TestSeededSchedules is this plus one (to try other schedules)")

var debugSeed = flag.Uint64("tracker.seed", 0, "run only this seed of TestSeededSchedules, verbosely")

func TestOneSeed(t *testing.T) {
	if *debugSeed == 0 {
		t.Skip("set -tracker.seed")
	}
	sc := scenario{seed: *debugSeed, polls: 40}
	if f := featureCases[*debugCase]; f != nil {
		f(&sc)
	} else if *debugCase == "random" {
		sc = randomScenario(*debugSeed)
	}
	t.Log(sc)
	sc.run(t)
}
