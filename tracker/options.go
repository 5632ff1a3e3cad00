package tracker

import (
	"time"

	"github.com/go-kit/log"

	"github.com/indexima-exporter/indexima_exporter/tally"
)

// Options of the engine; zero values get defaults (withDefaults).
type Options struct {
	// Window is the late window: an event that becomes visible with a date
	// up to Window behind the cursor (a long event listed only once it
	// completes, a node whose clock lags the console's) is still counted
	// exactly once. Memory per node grows with the events of one window.
	Window time.Duration
	// LookBack bounds how far before first contact the engine reads to learn
	// the node's state (cluster state, indexes, tables, preload), and
	// LookBackCalls the calls it may spend on it.
	LookBack      time.Duration
	LookBackCalls int
	Limits        tally.Limits
	Logger        log.Logger
	// Now is the exporter's clock: when counting began (the counters'
	// created timestamp), and, for a console whose answers carry no Date
	// header, where first contact reads back from. Every time the engine
	// asks the console for comes from the console's own answers.
	Now func() time.Time
	// HandOut bounds the counted events a poll hands out in its Report:
	// the latest HandOut counted (a caller that shows the latest, as the
	// status page), none when 0, every one when negative (a caller that
	// writes them all, the event log: it then holds a poll's events until
	// the poll ends, a backlog's included).
	HandOut int
	// DownNodeName names the node a NODE_DOWN event reports, from its
	// down-node key (tally.DownNodeKey: the node's number, in the
	// specification), when the event is read for the first time; the
	// report keeps that name (NodeDown, NodeDownLast, CountedEvent.DownNode),
	// so that a configuration loaded later, which may give the number to
	// another node, does not rename it. nil: the key is the name.
	DownNodeName DownNodeNamer
}

// DownNodeNamer names a down node from its down-node key; a key it cannot
// name it returns as it is.
type DownNodeNamer func(key string) string

// HandOutAll is the HandOut of a caller that takes every counted event.
const HandOutAll = -1

// nameDownNode is the name of the down node of key by name (nil: the key),
// made a tally.Name; the key when the name is empty.
func nameDownNode(name DownNodeNamer, key string) string {
	if name == nil {
		return key
	}
	if n := tally.Name(name(key)); n != "" {
		return n
	}
	return key
}

// Defaults.
const (
	DefaultWindow        = time.Hour
	DefaultLookBack      = 7 * 24 * time.Hour
	DefaultLookBackCalls = 20
)

// Bounds of the work of one poll and of what a node keeps.
const (
	pageLimit      = 1000   // first :limit of a page
	maxPageLimit   = 16000  // :limit doubles up to this when a page is one millisecond
	lookBackLimit  = 5000   // :limit of the look-back pages at first contact
	maxSearchCalls = 100    // calls a poll may spend looking for missing events
	lookupsPerPoll = 20     // look-ups of long-running events that vanished
	lookupSpan     = 60_000 // ms of start dates one look-up covers
	lookupLimit    = 1000
	pendingCap     = 256 // running events remembered per node
	pendingMisses  = 5   // polls a vanished running event is waited for before it is given up
	relistCap      = 20000
	minSlackMS     = 2_000
	lookaheadMS    = 24 * 3600 * 1000 // counts reach this far past the cursor and the console's clock (nodes ahead of the console)
	knownSoftCap   = 1 << 16          // entries a response may add before they are merged mid-response
)

func (o Options) withDefaults() Options {
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	if o.LookBack <= 0 {
		o.LookBack = DefaultLookBack
	}
	if o.LookBackCalls <= 0 {
		o.LookBackCalls = DefaultLookBackCalls
	}
	if o.Limits.MaxNames <= 0 {
		o.Limits.MaxNames = 500
	}
	if o.Limits.MaxEventTypes <= 0 {
		o.Limits.MaxEventTypes = 32
	}
	if o.Logger == nil {
		o.Logger = log.NewNopLogger()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// windowMS is the late window in milliseconds.
func (o Options) windowMS() int64 { return o.Window.Milliseconds() }

// maxRelistMS bounds how far behind the cursor a lastevents listing may
// start (to cover running events and learned lateness): half the window.
func (o Options) maxRelistMS() int64 { return o.Window.Milliseconds() / 2 }
