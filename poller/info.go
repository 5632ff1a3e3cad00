package poller

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/internal/clip"
	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// InfoCalls are the calls a poll makes besides the event poll, for data
// that changes slowly: the node's version and the column counts of its
// loaded tables. They run inside the node's shared poll, after a
// successful event poll, so concurrent scrapes never repeat them and their
// failure never marks the node down; each is made at most every
// Options.InfoRefresh per node (and table).
type InfoCalls struct {
	Version bool // get/version
	Columns bool // get/columns/:table of each loaded table
}

// Info is what the info calls learned of a node. It is replaced, never
// modified; a poll that does not want an info forgets it.
type Info struct {
	version versionCache
	columns columnsCache
}

// Version is the node's answer to get/version, as clip.Text makes it (at
// most maxVersionBytes); "" until a call succeeded.
func (i Info) Version() string { return i.version.version }

// Columns returns the column count of each loaded table whose count is
// known. The map is the caller's.
func (i Info) Columns() map[string]int {
	out := make(map[string]int, len(i.columns))
	for table, e := range i.columns {
		if e.count >= 0 && !e.fetched.IsZero() {
			out[table] = e.count
		}
	}
	return out
}

// maxVersionBytes bounds the version a node keeps, whatever its console
// answers: it is a label value of every scrape and a line of /status.
const maxVersionBytes = 128

// retryAfterFailure is the shortest wait before an info call that failed is
// tried again (a broken endpoint must not add a call to every poll).
const retryAfterFailure = time.Minute

// columnsPerPoll bounds the get/columns calls of one poll; the other tables
// are refreshed by the next polls.
const columnsPerPoll = 20

// refresh makes the info calls want asks for inside a node's poll (st is
// the state the poll just read) and returns the node's new Info; the calls'
// errors go to res. Columns first, then version: the order the calls have
// always been made in.
func (p *Poller) refresh(ctx context.Context, api nodeAPI, node apiclient.Node, st *tracker.State, prev Info, want InfoCalls, res *Result, logger log.Logger) Info {
	var next Info
	now, every := time.Now(), p.opts.InfoRefresh
	if want.Columns {
		next.columns, res.ColumnsErr = prev.columns.refresh(ctx, api, node, st, now, every)
		if res.ColumnsErr != nil {
			level.Warn(logger).Log("msg", "info call failed; node not marked down", "collector", "columns", "err", res.ColumnsErr)
		}
	}
	if want.Version {
		next.version, res.VersionErr = prev.version.refresh(ctx, api, node, now, every)
		if res.VersionErr != nil {
			level.Warn(logger).Log("msg", "info call failed; node not marked down", "collector", "version", "err", res.VersionErr)
		}
	}
	return next
}

type versionCache struct {
	version   string // "" until a call succeeded
	fetched   time.Time
	attempted time.Time
}

func (c versionCache) refresh(ctx context.Context, api nodeAPI, node apiclient.Node, now time.Time, every time.Duration) (versionCache, error) {
	if c.version != "" && now.Sub(c.fetched) < every {
		return c, nil
	}
	if !c.attempted.IsZero() && now.Sub(c.attempted) < min(every, retryAfterFailure) {
		return c, nil
	}
	c.attempted = now
	info, err := api.Version(ctx, node)
	if err != nil {
		return c, err
	}
	v := clip.Text(info.Version, maxVersionBytes)
	if v == "" {
		v = clip.Text(info.Raw, maxVersionBytes) // shape not understood: show what the node said
	}
	if v == "" {
		v = "unknown"
	}
	c.version, c.fetched = v, now
	return c, nil
}

type columnsEntry struct {
	count     int // -1: the answer's shape gave no count
	fetched   time.Time
	attempted time.Time
}

// columnsCache is replaced, never modified, once stored in a node's Info.
type columnsCache map[string]columnsEntry

func (old columnsCache) refresh(ctx context.Context, api nodeAPI, node apiclient.Node, st *tracker.State, now time.Time, every time.Duration) (columnsCache, error) {
	next := columnsCache{}
	var due []string
	for table := range st.Tables { // tables no longer loaded are forgotten
		e, ok := old[table]
		if !ok {
			e.count = -1
		}
		next[table] = e
		switch {
		case !ok:
			due = append(due, table)
		case e.attempted.After(e.fetched) && now.Sub(e.attempted) < min(every, retryAfterFailure):
		case now.Sub(e.fetched) >= every:
			due = append(due, table)
		}
	}
	sort.Strings(due)
	if len(due) > columnsPerPoll {
		due = due[:columnsPerPoll]
	}
	var errs []error
	for _, table := range due {
		e := next[table]
		e.attempted = now
		info, err := api.Columns(ctx, node, table)
		if err != nil {
			errs = append(errs, err)
		} else {
			e.count, e.fetched = info.Count, now
			if e.count < 0 && len(info.Columns) > 0 {
				e.count = len(info.Columns)
			}
		}
		next[table] = e
	}
	return next, errors.Join(errs...)
}
