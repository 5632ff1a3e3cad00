package collector

import (
	"context"

	"github.com/go-kit/log/level"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
)

// Bounds of paging through an interval whose listing fell short.
const (
	pageLimit    = 1000  // first :limit of get/event/asc
	maxPageLimit = 16000 // :limit doubles up to this when a page is one timestamp
	maxPages     = 100   // pages per poll; beyond, the cursor stays (next poll resumes)
)

// page walks get/event/asc/<start>/<last>/<limit> from the cursor, counting
// what the listing missed. The next page starts at the greatest date of the
// page (inclusive: dedup absorbs the overlap). A short page is not taken as
// the end, since consoles may cap :limit silently: paging stops when a page
// is empty. A page that brings nothing new is not the end either (a capped
// listing and a capped page can hold the same events); each page moves the
// start forward or grows the limit, so paging ends within maxPages. It
// reports false, and where to resume, when the page bound was hit (the
// interval was not fully read: everything before the resume point was).
func (p *poller) page(ctx context.Context, st *nodeState, start, last int64) (bool, int64, error) {
	limit := pageLimit
	for pages := 0; ; pages++ {
		if pages >= maxPages {
			level.Warn(p.logger).Log("msg", "paging bound hit; cursor not advanced, the next poll pages on",
				"pages", pages, "resume_at", start, "to", last)
			return false, start, nil
		}
		s := newSink(p, st, true, start)
		_, err := p.api.StreamListing(ctx, p.node, apiclient.Range(apiclient.Asc, start, last, limit), s)
		if err != nil {
			return false, 0, err
		}
		st.Seen.endResponse()
		switch {
		case s.reqs == 0:
			return true, 0, nil
		case s.maxDate > start:
			start = s.maxDate
		case s.reqs >= limit && limit < maxPageLimit:
			// A full page of the boundary millisecond: ask for more of it
			// rather than looping on the same page.
			limit = min(2*limit, maxPageLimit)
		default:
			// The page is one millisecond and no more of it can be had (all
			// of it, or all a silently capped console gives): move past it.
			start = s.maxDate + 1
		}
		if start > last {
			return true, 0, nil
		}
	}
}
