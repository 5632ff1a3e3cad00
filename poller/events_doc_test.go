package poller

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// keptEventsRE finds where the docs say how many events each node keeps
// ("the latest 20 events", "the last 20 per node", "the latest 20 of the
// events it counts").
var keptEventsRE = regexp.MustCompile(`(?:last|latest) (\d+)(?: of the)?(?: counted)? (?:events|per node)`)

// TestDocsSayHowManyEventsAreKept: the README (/status, /events) and
// docs/events.md and docs/performance.md say each node keeps RecentEvents
// events, wherever they give the number.
func TestDocsSayHowManyEventsAreKept(t *testing.T) {
	for _, doc := range []string{"README.md", "docs/events.md", "docs/performance.md"} {
		b, err := os.ReadFile(filepath.Join("..", doc))
		if err != nil {
			t.Fatal(err)
		}
		found := keptEventsRE.FindAllStringSubmatch(string(b), -1)
		if len(found) == 0 {
			t.Errorf("%s no longer says how many events a node keeps (%s): update this test", doc, keptEventsRE)
		}
		for _, m := range found {
			if n, _ := strconv.Atoi(m[1]); n != RecentEvents {
				t.Errorf("%s says %q: each node keeps RecentEvents = %d", doc, m[0], RecentEvents)
			}
		}
	}
}
