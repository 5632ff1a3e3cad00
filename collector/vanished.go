package collector

import (
	"context"
	"sort"

	"github.com/go-kit/log/level"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
)

// lookupVanished finds the pending running events that are no longer running
// but were not seen completed: they started before the cursor, so lastevents
// never lists them. Each is looked up with get/event/asc/<date>/<date>/<limit>
// and counted when found; one found neither completed nor running stays
// pending for pendingMaxMisses polls, then is given up (logged).
func (p *poller) lookupVanished(ctx context.Context, st *nodeState, running map[string]*runningSeen) error {
	var keys []string
	for key := range st.Pending {
		if _, ok := running[key]; !ok {
			keys = append(keys, key)
		}
	}
	// Oldest first, so a long backlog drains in order across polls.
	sort.Slice(keys, func(i, j int) bool {
		a, b := st.Pending[keys[i]], st.Pending[keys[j]]
		if a.Date != b.Date {
			return a.Date < b.Date
		}
		return keys[i] < keys[j]
	})
	if len(keys) > lookupsPerPoll {
		keys = keys[:lookupsPerPoll]
	}
	for _, key := range keys {
		pe, ok := st.Pending[key]
		if !ok {
			continue // resolved by an earlier lookup of this poll
		}
		s := newSink(p, st, true, pe.Date)
		if _, err := p.api.StreamListing(ctx, p.node, apiclient.Range(apiclient.Asc, pe.Date, pe.Date, lookupLimit), s); err != nil {
			return err
		}
		st.Seen.endResponse()
		cur, still := st.Pending[key]
		switch {
		case !still:
			// Found completed and counted.
		case s.runningKeys[key] != nil:
			cur.Misses = 0 // still running after all (a listing whose runnings were partial)
			st.Pending[key] = cur
		case cur.Misses+1 >= pendingMaxMisses:
			delete(st.Pending, key)
			level.Warn(p.logger).Log("msg", "running event vanished without being seen completed; given up, not counted",
				"event", pe.Type, "date", pe.Date, "lookups", cur.Misses+1)
		default:
			cur.Misses++
			st.Pending[key] = cur
		}
	}
	return nil
}
