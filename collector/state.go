package collector

import "github.com/indexima-exporter/indexima_exporter/apiclient"

// nodeState is everything the exporter knows about one node: the cursor and
// dedup memory of the event tracking, the counters, and the gauges learned
// from events. It is plain data (exported fields, JSON tags) so that it can
// be cloned for a poll's staging, and saved to and restored from a state file.
//
// Every map is bounded: label maps by Options.MaxLabelValues, event labels
// by the ten known types plus Options.MaxEventTypes plus OTHER, Seen by
// seenCap, Pending by pendingCap.
type nodeState struct {
	Contacted bool  `json:"contacted"` // first contact done: baseline taken
	Cursor    int64 `json:"cursor"`    // `last` of the latest complete poll, Unix ms
	// Rewound is the highest cursor the node's `last` ever went back from
	// (0: never). An event completed by then was already counted.
	Rewound int64 `json:"rewound,omitempty"`
	// ResumeAt is where paging stopped when a poll hit the page bound (0:
	// none): the next poll pages on from there instead of walking again the
	// pages already read, while the cursor stays until the interval is whole.
	ResumeAt int64 `json:"resume_at"`

	Seen    seenSet                 `json:"seen"`
	Pending map[string]pendingEvent `json:"pending"`

	// Counters (only events completed after first contact).
	Events           map[string]uint64        `json:"events"`    // by event label
	Durations        map[string]*durationHist `json:"durations"` // by event label
	Reported         uint64                   `json:"reported"`  // sum of event/count
	NodeDown         map[string]uint64        `json:"node_down"` // by down node
	MetadataUpgraded uint64                   `json:"metadata_upgraded"`
	Dropped          map[string]uint64        `json:"dropped"` // label values dropped, by label name

	// Gauges (learned from every listing, the first-contact one included).
	Running         map[string]int        `json:"running"`   // by event label, from the latest runnings
	LastDate        map[string]int64      `json:"last_date"` // by event label
	Phase           datedValue            `json:"phase"`     // cluster state and the date that set it
	Indexes         map[string]indexState `json:"indexes"`
	Tables          map[string]int64      `json:"tables"` // loaded table -> date of its TABLE_LOADED
	TablesClearedAt int64                 `json:"tables_cleared_at"`
	Preload         datedNumber           `json:"preload"`
	UnknownTypes    map[string]bool       `json:"unknown_types"`
}

type datedValue struct {
	Value string `json:"value"`
	Date  int64  `json:"date"`
}

type datedNumber struct {
	Value int64 `json:"value"`
	Date  int64 `json:"date"`
	Known bool  `json:"known"`
}

type indexState struct {
	Loaded bool  `json:"loaded"`
	Date   int64 `json:"date"`
}

// clone deep-copies the state: a poll works on a clone and the clone
// replaces the state only when every call of the poll succeeded.
func (st *nodeState) clone() *nodeState {
	c := *st
	c.Seen = st.Seen.clone()
	c.Pending = cloneMap(st.Pending)
	c.Events = cloneMap(st.Events)
	c.Durations = make(map[string]*durationHist, len(st.Durations))
	for k, h := range st.Durations {
		c.Durations[k] = h.clone()
	}
	c.NodeDown = cloneMap(st.NodeDown)
	c.Dropped = cloneMap(st.Dropped)
	c.Running = cloneMap(st.Running)
	c.LastDate = cloneMap(st.LastDate)
	c.Indexes = cloneMap(st.Indexes)
	c.Tables = cloneMap(st.Tables)
	c.UnknownTypes = cloneMap(st.UnknownTypes)
	return &c
}

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	c := make(map[K]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// completedBeforeRewind tells whether e had completed before the node's
// clock went back: then it was seen (and counted) before, and finding it
// running again, then completed, is a replay.
func (st *nodeState) completedBeforeRewind(e apiclient.Event) bool {
	end := e.Date
	if e.HasDuration && e.Duration > 0 {
		end += e.Duration
	}
	return st.Rewound > 0 && end <= st.Rewound
}
