package poller

import (
	"maps"
	"sort"
	"time"

	"github.com/indexima-exporter/indexima_exporter/tally"
	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// RecentPolls is how many polls of each node Status keeps: the last few,
// enough to see a node flapping or a search running over several polls.
const RecentPolls = 10

// PollRecord is one poll of a node, as the status page shows it. Polls a
// scrape joined while they ran are recorded once, by the scrape that
// started them.
type PollRecord struct {
	Start    time.Time     // when the poll began (the exporter's clock)
	Duration time.Duration // until its outcome was committed
	Calls    int           // console calls the counting engine made (the version and columns refreshes aside)
	// EventsCounted is the number of events the poll counted and applied: 0 when
	// nothing of the poll was applied (a failed poll).
	EventsCounted int
	// FirstContact is set for the poll that took the node's baseline.
	FirstContact bool
	// Searched and Incomplete: the poll looked for events the count said
	// were missing, and ran out of its call budget doing so.
	Searched, Incomplete bool
	// Reason is the failure's reason (the values of the reason label of
	// indexima_exporter_node_poll_failures_total), "" for a successful poll.
	Reason string
	// Error is the typed error's text, "" for a successful poll: the same
	// text the log line of the failure shows, which never holds a secret.
	Error string
}

// Up tells whether the poll succeeded (indexima_up 1).
func (r PollRecord) Up() bool { return r.Reason == "" && r.Error == "" }

// pollRing keeps the last RecentPolls records of a node (newestFirst: the
// newest first).
type pollRing struct{ ring[PollRecord] }

func (r *pollRing) add(rec PollRecord) { r.ring.add(RecentPolls, rec) }

// ClusterStatus is one configured cluster and the status of its nodes.
type ClusterStatus struct {
	Name  string // module name; "" for the single unnamed cluster
	Nodes []NodeStatus
}

// NodeStatus is what the exporter knows of one node right now: its latest
// polls and what the counting engine learned. It is read from memory only;
// asking for it calls no console.
type NodeStatus struct {
	Cluster string
	Name    string // the node label's value
	Target  string // host:port
	// Polls are the latest polls, the newest first (at most RecentPolls);
	// empty until the node's first poll.
	Polls []PollRecord
	// Failures counts the failed polls since the exporter started (or the
	// node was configured), by reason.
	Failures map[string]uint64

	// Contacted is set once the node's baseline was taken (first contact);
	// the fields below are meaningful only then.
	Contacted bool
	Since     time.Time // when counting began; zero when not known
	// CountedTotal is the sum of indexima_events_total over the event types;
	// Reported the console's own number of events since first contact
	// (indexima_events_reported_total).
	CountedTotal, Reported uint64
	// Semantics is what the console's event/count counts, as detected
	// (completed, includes_running, unknown).
	Semantics string
	// ClockLag is how far the node's clock is behind the console's
	// (negative: ahead), when the listings tell it within a few seconds
	// (tracker.State.ClockLag).
	ClockLag      time.Duration
	ClockLagKnown bool
	// Cursor is the start of the newest event the node's listings showed
	// (the node's clock); zero when none yet.
	Cursor time.Time
	// Running is the number of running events by type, at the latest
	// successful poll (types with none left out).
	Running map[string]int
	// ClusterState is the node's cluster state (starting, ready,
	// initializing, stopped, unknown).
	ClusterState string
	// Events are the node's latest counted events (at most RecentEvents),
	// the latest dated first; kept in memory since the exporter started.
	Events []tracker.CountedEvent
}

// Last is the latest poll; ok is false before the first.
func (s NodeStatus) Last() (PollRecord, bool) {
	if len(s.Polls) == 0 {
		return PollRecord{}, false
	}
	return s.Polls[0], true
}

// RunningTotal is the number of events running at the latest successful
// poll, every type together.
func (s NodeStatus) RunningTotal() int {
	n := 0
	for _, c := range s.Running {
		n += c
	}
	return n
}

// Status returns the status of every configured node, in the order of the
// configuration. It only reads what the polls recorded.
func (p *Poller) Status() []ClusterStatus {
	clusters := p.Current().Clusters
	out := make([]ClusterStatus, 0, len(clusters))
	for _, c := range clusters {
		cs := ClusterStatus{Name: c.Name, Nodes: make([]NodeStatus, 0, len(c.Nodes))}
		for _, n := range c.Nodes {
			cs.Nodes = append(cs.Nodes, n.status())
		}
		out = append(out, cs)
	}
	return out
}

func (n *NodeRuntime) status() NodeStatus {
	n.mu.Lock()
	s := NodeStatus{Cluster: n.cluster, Name: n.name, Target: n.target.String(),
		Polls: n.recent.newestFirst(), Failures: maps.Clone(n.failures), Events: n.events.newestFirst()}
	st := n.state // committed states are never modified: read it unlocked
	n.mu.Unlock()
	if st == nil || !st.Contacted {
		return s
	}
	s.Contacted = true
	if st.Since > 0 {
		s.Since = time.UnixMilli(st.Since)
	}
	for _, c := range st.Events {
		s.CountedTotal += c
	}
	s.Reported = st.Reported
	s.Semantics = string(st.Semantics.Detected())
	if lag, ok := st.ClockLag(); ok {
		s.ClockLag, s.ClockLagKnown = time.Duration(lag)*time.Millisecond, true
	}
	if st.Cursor > 0 {
		s.Cursor = time.UnixMilli(st.Cursor)
	}
	s.Running = map[string]int{}
	for t, c := range st.Running {
		if c > 0 {
			s.Running[t] = c
		}
	}
	s.ClusterState = st.Phase.Value
	if s.ClusterState == "" {
		s.ClusterState = tally.StateUnknown
	}
	return s
}

// RunningTypes returns the types of the running events, sorted.
func (s NodeStatus) RunningTypes() []string {
	types := make([]string, 0, len(s.Running))
	for t := range s.Running {
		types = append(types, t)
	}
	sort.Strings(types)
	return types
}

// pollRecord makes the record of a poll that began at start.
func pollRecord(start time.Time, dur time.Duration, rep tracker.Report, firstContact bool, applied bool, res Result) PollRecord {
	rec := PollRecord{Start: start, Duration: dur, Calls: rep.Calls, FirstContact: firstContact,
		Searched: rep.Searched, Incomplete: rep.Incomplete, Reason: res.Reason}
	if applied {
		rec.EventsCounted = rep.EventsCounted
	}
	if res.Err != nil {
		rec.Error = res.Err.Error()
		if rec.Reason == "" {
			rec.Reason = ReasonOther
		}
	}
	return rec
}
