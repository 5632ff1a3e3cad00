package simulator

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Readings are the console's answers wherever the specification leaves a
// choice open. Each is a knob of its own, independent of the others, and
// every one can change while the console serves (SetReadings), as a real
// console's can across an upgrade or a restart. The zero value is the
// simulator's default reading of each. docs/counting.md lists them with what
// the exporter does under each.
type Readings struct {
	// Last is what a listing's `last` is: "the timestamp of the current
	// listing" (2.3) says no more.
	Last LastReading
	// Runnings is how running events are shown: listed in runnings while
	// they run; runnings always empty ("may be empty"), so an event is
	// listed only once completed; or the field left out of the body.
	Runnings RunningsReading
	// ExclusiveSince makes lastevents/:time list events dated after :time
	// (default: at or after it).
	ExclusiveSince bool
	// Bounds is whether :start and :end of asc, desc and count are
	// included ("starting between :start and :end").
	Bounds BoundsReading
	// NewestFirst orders day and lastevents listings newest first.
	NewestFirst bool
	// ListingCap caps the reqs of day and lastevents listings (0: none);
	// CapKeepsNewest keeps the newest events of the listing's range instead
	// of the oldest. `last` is unchanged by the cap.
	ListingCap     int
	CapKeepsNewest bool
	// MaxLimit is a silent maximum of :limit of asc and desc (0: none).
	MaxLimit int
	// CountRunning makes event/count include events still running (and
	// events aborted while running: they started, and never completed).
	CountRunning bool
	// RetainFor forgets events dated more than this before the node's now;
	// RetainLast keeps only the newest N started events (0: keep all). A
	// forgotten event is neither listed nor counted, ever again.
	RetainFor  time.Duration
	RetainLast int
	// AbortOnStop makes a cluster stop abort the events running on each
	// node: they never complete and are never listed again (a console that
	// counts running events counts them still).
	AbortOnStop bool
	// NoDate leaves the Date header out of every answer (by default it is
	// the console's clock, as an HTTP server's is).
	NoDate bool
}

// LastReading is what `last` holds.
type LastReading string

const (
	LastNodeClock    LastReading = ""              // the node's clock (default)
	LastConsoleClock LastReading = "console-clock" // the console's clock: a lagging node dates its events behind it
	LastNewest       LastReading = "newest"        // the newest event returned; :time (:start) echoed when none is
	LastAhead        LastReading = "ahead"         // a value a day ahead of any clock
)

// RunningsReading is how running events are shown.
type RunningsReading string

const (
	RunningsListed RunningsReading = ""       // in runnings while they run (default)
	RunningsEmpty  RunningsReading = "empty"  // runnings always []: an event is listed once completed
	RunningsAbsent RunningsReading = "absent" // no runnings field at all
)

// BoundsReading is whether the bounds of asc, desc and count are included.
type BoundsReading string

const (
	BoundsInclusive      BoundsReading = ""                // [start, end] (default)
	BoundsExclusive      BoundsReading = "exclusive"       // (start, end)
	BoundsStartExclusive BoundsReading = "start-exclusive" // (start, end]
	BoundsEndExclusive   BoundsReading = "end-exclusive"   // [start, end)
)

// LastReadings, RunningsReadings and BoundsReadings list the values of each
// knob, the default first, by their flag names.
var (
	LastReadings     = []string{"node-clock", string(LastConsoleClock), string(LastNewest), string(LastAhead)}
	RunningsReadings = []string{"listed", string(RunningsEmpty), string(RunningsAbsent)}
	BoundsReadings   = []string{"inclusive", string(BoundsExclusive), string(BoundsStartExclusive), string(BoundsEndExclusive)}
)

// ParseLast reads the flag value of the `last` knob (one of LastReadings).
func ParseLast(s string) (LastReading, error) {
	return parseReading[LastReading](s, "last", LastReadings)
}

// ParseRunnings reads the flag value of the runnings knob (one of
// RunningsReadings).
func ParseRunnings(s string) (RunningsReading, error) {
	return parseReading[RunningsReading](s, "runnings", RunningsReadings)
}

// ParseBounds reads the flag value of the bounds knob (one of
// BoundsReadings).
func ParseBounds(s string) (BoundsReading, error) {
	return parseReading[BoundsReading](s, "bounds", BoundsReadings)
}

func parseReading[T ~string](s, what string, names []string) (T, error) {
	for i, n := range names {
		if s == n {
			if i == 0 {
				return "", nil
			}
			return T(s), nil
		}
	}
	return "", fmt.Errorf("unknown %s reading %q (known: %s)", what, s, strings.Join(names, ", "))
}

// Validate reports a reading that cannot be served.
func (r Readings) Validate() error {
	if _, err := ParseLast(nameOr(string(r.Last), LastReadings)); err != nil {
		return err
	}
	if _, err := ParseRunnings(nameOr(string(r.Runnings), RunningsReadings)); err != nil {
		return err
	}
	if _, err := ParseBounds(nameOr(string(r.Bounds), BoundsReadings)); err != nil {
		return err
	}
	if r.ListingCap < 0 || r.MaxLimit < 0 || r.RetainLast < 0 || r.RetainFor < 0 {
		return fmt.Errorf("caps and retention must not be negative")
	}
	return nil
}

func nameOr(v string, names []string) string {
	if v == "" {
		return names[0]
	}
	return v
}

// String names the non-default readings, e.g. "last=newest,bounds=exclusive".
func (r Readings) String() string {
	var p []string
	add := func(ok bool, s string) {
		if ok {
			p = append(p, s)
		}
	}
	add(r.Last != "", "last="+string(r.Last))
	add(r.Runnings != "", "runnings="+string(r.Runnings))
	add(r.ExclusiveSince, "exclusive-since")
	add(r.Bounds != "", "bounds="+string(r.Bounds))
	add(r.NewestFirst, "newest-first")
	add(r.ListingCap > 0, fmt.Sprintf("listing-cap=%d", r.ListingCap))
	add(r.CapKeepsNewest, "cap-keeps-newest")
	add(r.MaxLimit > 0, fmt.Sprintf("max-limit=%d", r.MaxLimit))
	add(r.CountRunning, "count-running")
	add(r.RetainFor > 0, "retain-for="+r.RetainFor.String())
	add(r.RetainLast > 0, fmt.Sprintf("retain-last=%d", r.RetainLast))
	add(r.AbortOnStop, "abort-on-stop")
	add(r.NoDate, "no-date")
	if len(p) == 0 {
		return "default"
	}
	return strings.Join(p, ",")
}

// readings returns the readings in force.
func (s *Simulator) readings() *Readings { return s.rd.Load() }

// setReadings changes the readings while serving: later answers follow
// them. What the console logged is not changed.
func (s *Simulator) setReadings(r Readings) { s.rd.Store(&r) }

// inclusive turns a range's :start and :end into the inclusive interval of
// dates it selects under the console's bounds reading.
func (r *Readings) inclusive(start, end int64) (lo, hi int64) {
	lo, hi = start, end
	switch r.Bounds {
	case BoundsExclusive:
		lo, hi = start+1, end-1
	case BoundsStartExclusive:
		lo = start + 1
	case BoundsEndExclusive:
		hi = end - 1
	}
	if start == maxInt64 {
		lo = maxInt64
	}
	if end == maxInt64 {
		hi = maxInt64
	}
	return lo, hi
}

// ApplyReadingParams sets the knobs named in params (by their flag names:
// last, runnings, exclusive-since, bounds, newest-first, listing-cap,
// cap-keeps-newest, max-limit, count-running, retain-for, retain-last,
// abort-on-stop, date; no-date, date's old spelling, is date's opposite) on r.
func ApplyReadingParams(r Readings, params map[string][]string) (Readings, error) {
	for name, vs := range params {
		if len(vs) == 0 {
			continue
		}
		v := vs[len(vs)-1]
		var err error
		switch name {
		case "last":
			r.Last, err = ParseLast(v)
		case "runnings":
			r.Runnings, err = ParseRunnings(v)
		case "bounds":
			r.Bounds, err = ParseBounds(v)
		case "exclusive-since":
			r.ExclusiveSince, err = strconv.ParseBool(v)
		case "newest-first":
			r.NewestFirst, err = strconv.ParseBool(v)
		case "cap-keeps-newest":
			r.CapKeepsNewest, err = strconv.ParseBool(v)
		case "count-running":
			r.CountRunning, err = strconv.ParseBool(v)
		case "abort-on-stop":
			r.AbortOnStop, err = strconv.ParseBool(v)
		case "date":
			var date bool
			date, err = strconv.ParseBool(v)
			r.NoDate = !date
		case "no-date":
			r.NoDate, err = strconv.ParseBool(v)
		case "listing-cap":
			r.ListingCap, err = strconv.Atoi(v)
		case "max-limit":
			r.MaxLimit, err = strconv.Atoi(v)
		case "retain-last":
			r.RetainLast, err = strconv.Atoi(v)
		case "retain-for":
			r.RetainFor, err = time.ParseDuration(v)
		default:
			return r, fmt.Errorf("unknown reading %q", name)
		}
		if err != nil {
			return r, fmt.Errorf("reading %s=%q: %w", name, v, err)
		}
	}
	return r, r.Validate()
}
