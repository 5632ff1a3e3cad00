// Package eventlog writes every event the exporter counts as one JSON line
// (--events.log): the events themselves, not only their counts, for log
// stacks (Loki, Elasticsearch, ...) to keep and search. Each event is written
// once, when it is counted, before the state file that marks it counted is
// saved; a write that fails keeps the lines pending and writes them at the
// next attempt (the state file is not saved meanwhile). The file rotates at
// a size, keeping a bounded number of old files. docs/events.md describes
// the lines and how to ship them.
//
// The same lines answer /events (package eventsapi): Line is the one shape
// of an event outside the engine.
package eventlog

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/clip"
	"github.com/indexima-exporter/indexima_exporter/poller"
	"github.com/indexima-exporter/indexima_exporter/tally"
	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// Line is one counted event as the log writes it and /events answers it.
type Line struct {
	// ID names the event: the same event always gets the same ID, whichever
	// poll counts it (after a crash, the events of the poll in flight are
	// written again, with their IDs), so a reader can drop duplicates.
	ID      string `json:"id"`
	Cluster string `json:"cluster"` // "" for the single unnamed cluster
	Node    string `json:"node"`    // the node label's value
	Target  string `json:"target"`  // the node's host:port
	Type    string `json:"type"`
	Date    string `json:"date"`    // the event's start, RFC 3339 in UTC with milliseconds (the node's clock)
	DateMS  int64  `json:"date_ms"` // the same, Unix milliseconds as the console gives it
	// DurationMS is null when the console gave none.
	DurationMS *int64 `json:"duration_ms"`
	Comment    string `json:"comment"`
	// DownNode is, for a NODE_DOWN event, the node reported down as the
	// metrics' down_node label names it: its configured name when the
	// configuration gave a node of the cluster the number in the comment
	// when the exporter first read the event (the name stays with the
	// event across reloads), else the comment. DownNodeNumber is that
	// number, when the comment is one (spec section 6).
	DownNode       string `json:"down_node,omitempty"`
	DownNodeNumber *int   `json:"down_node_number,omitempty"`
}

// MaxComment bounds the comment written in a line, in bytes (cut at a
// character boundary): a line must fit in a write, whatever a console puts
// in a comment. The ID is made of the whole comment.
const MaxComment = 16 << 10

// dateLayout is RFC 3339 with exactly three digits of milliseconds.
const dateLayout = "2006-01-02T15:04:05.000Z07:00"

// LineOf makes the line of an event a node counted.
func LineOf(n poller.NodeRef, c tracker.CountedEvent) Line {
	l := Line{
		ID:      ID(n, c),
		Cluster: n.Cluster,
		Node:    n.Name,
		Target:  n.Target,
		Type:    c.Type,
		Date:    time.UnixMilli(c.Date).UTC().Format(dateLayout),
		DateMS:  c.Date,
		Comment: clip.Prefix(c.Comment, MaxComment),
	}
	if c.HasDuration {
		d := c.Duration
		l.DurationMS = &d
	}
	if c.Type == "NODE_DOWN" {
		l.DownNode, l.DownNodeNumber = DownNodeOf(c)
	}
	return l
}

// DownNodeOf is the down node of a NODE_DOWN event as the lines give it
// (Line.DownNode, Line.DownNodeNumber), for the pages that show the
// events otherwise (/status).
func DownNodeOf(c tracker.CountedEvent) (name string, number *int) {
	key := tally.DownNodeKey(c.Comment)
	name = c.DownNode
	if name == "" {
		name = key // (not named by the engine: a caller's own event)
	}
	if n, ok := tally.NodeNumber(key); ok {
		number = &n
	}
	return name, number
}

// ID names an event: a hash of what tells it in the node's log (the
// cluster and host:port of the node, not its label, which a reload may
// change; the type, date, duration and comment; its place among identical
// events at its millisecond), 128 bits in hex.
func ID(n poller.NodeRef, c tracker.CountedEvent) string {
	// Most inputs fit in this array, on the stack: the input of a line per
	// counted event need not be allocated.
	var in [256]byte
	sum := sha256.Sum256(idInput(in[:0], n, c))
	return hex.EncodeToString(sum[:16])
}

// idInput appends what ID hashes: each string length-prefixed, each
// number 8 bytes, so that no two events give the same input.
func idInput(b []byte, n poller.NodeRef, c tracker.CountedEvent) []byte {
	field := func(s string) {
		b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
		b = append(b, s...)
	}
	number := func(v int64) { b = binary.LittleEndian.AppendUint64(b, uint64(v)) }
	field(n.Cluster)
	field(n.Target)
	field(c.Type)
	number(c.Date)
	if c.HasDuration {
		number(1)
		number(c.Duration)
	} else {
		number(0)
	}
	field(c.Comment)
	number(int64(c.Nth))
	return b
}
