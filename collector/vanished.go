package collector

import (
	"context"
	"sort"

	"github.com/go-kit/log/level"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
)

// lookupVanished finds the pending running events that are no longer running
// but were not seen completed: they started before the cursor, so lastevents
// never lists them. Each is looked up with
// get/event/asc/<date>/<date+lookupSpan>/<limit> (one call resolves the
// others of that span too) and counted when found; one found neither
// completed nor running stays pending for pendingMaxMisses polls, then is
// given up (logged).
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
	// One lookup lists every event starting in [date, date+lookupSpan]
	// (up to the cursor), so the other vanished events of that span are
	// resolved by the same call; only calls count against the budget.
	calls := 0
	for _, key := range keys {
		pe, ok := st.Pending[key]
		if !ok {
			continue // resolved by an earlier lookup of this poll
		}
		if pe.Date > st.Cursor {
			// The node's clock went back before its start: it is in the
			// node's future, not vanished. It shows again when the clock
			// catches up.
			continue
		}
		if calls >= lookupsPerPoll {
			break // the rest wait for the next poll, oldest first
		}
		calls++
		end := max(pe.Date, min(pe.Date+lookupSpan, st.Cursor))
		s := newSink(p, st, true, pe.Date)
		if _, err := p.api.StreamListing(ctx, p.node, apiclient.Range(apiclient.Asc, pe.Date, end, lookupLimit), s); err != nil {
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
		case s.reqs >= lookupLimit && s.maxDate > pe.Date:
			// A full page that may have stopped short of it: not a miss,
			// the next lookup starts at its own date again.
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
