package web

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// scrapeTimeoutHeader is what Prometheus sends with every scrape: how long
// it waits for the answer before it gives the whole scrape up.
const scrapeTimeoutHeader = "X-Prometheus-Scrape-Timeout-Seconds"

// minScrapeBudget is the least a scrape gets, whatever the header says.
const minScrapeBudget = 100 * time.Millisecond

// scrapeContext is the context of one scrape of /metrics or /probe: it ends
// when the request does, and at the scrape's deadline: the header's timeout
// less the offset (time left to encode and send the answer), as
// blackbox_exporter does with --timeout-offset, but never more than a tenth
// of a short timeout (Prometheus scraping every second with a 1 s timeout
// leaves 0.9 s to the polls, not 0.5 s). Without the header (curl, a
// scraper that does not send it), the deadline is Prometheus' default scrape
// timeout (10 s) less the offset. Within it, a node whose poll is not done
// is down for that scrape, and the others are served on time.
func scrapeContext(r *http.Request, offset time.Duration) (context.Context, context.CancelFunc) {
	timeout := 10 * time.Second
	if v := r.Header.Get(scrapeTimeoutHeader); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 && s < 24*3600 {
			timeout = time.Duration(s * float64(time.Second))
		}
	}
	budget := timeout - min(offset, timeout/10)
	return context.WithTimeout(r.Context(), max(budget, minScrapeBudget))
}
