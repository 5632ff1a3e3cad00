package eventlog

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/indexima-exporter/indexima_exporter/event"
	"github.com/indexima-exporter/indexima_exporter/poller"
	"github.com/indexima-exporter/indexima_exporter/tracker"
)

var (
	ref   = poller.NodeRef{Cluster: "prod", Name: "core-1", Target: "core-1.example:9999"}
	tload = tracker.CountedEvent{Event: event.Event{Type: "TABLE_LOADED", Date: time.Date(2026, 3, 10, 12, 0, 20, 7_000_000, time.UTC).UnixMilli(),
		Duration: 1500, HasDuration: true, Comment: "sales"}, Nth: 1}
)

// A line holds the event as the console gave it, its date twice (RFC 3339
// with milliseconds, and Unix ms), and parses back as one JSON object.
func TestLineOfAnEvent(t *testing.T) {
	l := LineOf(ref, tload)
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string]any{"cluster": "prod", "node": "core-1", "target": "core-1.example:9999",
		"type": "TABLE_LOADED", "date_ms": float64(tload.Date), "duration_ms": float64(1500), "comment": "sales"} {
		if back[field] != want {
			t.Errorf("%s = %v, want %v (line %s)", field, back[field], want, b)
		}
	}
	date, err := time.Parse(time.RFC3339Nano, l.Date)
	if err != nil || date.UnixMilli() != tload.Date || !strings.HasSuffix(l.Date, ".007Z") {
		t.Errorf("date %q (%v): want RFC 3339 in UTC with the milliseconds of %d", l.Date, err, tload.Date)
	}
	if _, ok := back["down_node"]; ok {
		t.Errorf("a TABLE_LOADED line has a down_node: %s", b)
	}
	if len(l.ID) != 32 {
		t.Errorf("id %q: want 128 bits in hex", l.ID)
	}

	// No duration: null, not 0.
	nd := tload
	nd.HasDuration, nd.Duration = false, 0
	if b, _ := json.Marshal(LineOf(ref, nd)); !bytes.Contains(b, []byte(`"duration_ms":null`)) {
		t.Errorf("an event without duration: %s", b)
	}
}

// NODE_DOWN: down_node is the down node as the engine named it when it
// counted the event (the metrics' down_node), its number a field of its
// own when the comment is one; an event the engine did not name falls
// back on the comment.
func TestLineOfNodeDown(t *testing.T) {
	down := tracker.CountedEvent{Event: event.Event{Type: "NODE_DOWN", Date: tload.Date, HasDuration: true, Comment: "3"}, Nth: 1, DownNode: "core-3"}
	b, err := json.Marshal(LineOf(ref, down))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(b, []byte(`"comment":"3","down_node":"core-3","down_node_number":3}`)) {
		t.Errorf("named: %s", b)
	}
	if bytes.Contains(b, []byte("down_node_name")) {
		t.Errorf("a down_node_name field: %s", b)
	}
	down.Comment, down.DownNode = "9", "9"
	if l := LineOf(ref, down); l.DownNode != "9" || l.DownNodeNumber == nil || *l.DownNodeNumber != 9 {
		t.Errorf("a number the configuration does not know: down_node %q, number %v", l.DownNode, l.DownNodeNumber)
	}
	down.Comment, down.DownNode = " core-7 ", "core-7"
	if l := LineOf(ref, down); l.DownNode != "core-7" || l.DownNodeNumber != nil {
		t.Errorf("a comment that is no number: down_node %q, number %v", l.DownNode, l.DownNodeNumber)
	}
	down.DownNode = ""
	if l := LineOf(ref, down); l.DownNode != "core-7" {
		t.Errorf("not named by the engine: down_node %q, want the comment as a label", l.DownNode)
	}
}

// The ID is the same for the same event and differs when anything that
// tells events apart differs, the node's label aside (a reload may rename
// a node; its log stays the same).
func TestIDNamesTheEvent(t *testing.T) {
	base := ID(ref, tload)
	if again := ID(poller.NodeRef{Cluster: "prod", Name: "renamed", Target: ref.Target}, tload); again != base {
		t.Errorf("a renamed node gives another id: %s, %s", again, base)
	}
	variants := map[string]func(n *poller.NodeRef, c *tracker.CountedEvent){
		"cluster":     func(n *poller.NodeRef, c *tracker.CountedEvent) { n.Cluster = "test" },
		"target":      func(n *poller.NodeRef, c *tracker.CountedEvent) { n.Target = "core-2.example:9999" },
		"type":        func(n *poller.NodeRef, c *tracker.CountedEvent) { c.Type = "HYPER_INDEX_LOADED" },
		"date":        func(n *poller.NodeRef, c *tracker.CountedEvent) { c.Date++ },
		"duration":    func(n *poller.NodeRef, c *tracker.CountedEvent) { c.Duration++ },
		"no duration": func(n *poller.NodeRef, c *tracker.CountedEvent) { c.HasDuration = false; c.Duration = 0 },
		"comment":     func(n *poller.NodeRef, c *tracker.CountedEvent) { c.Comment += "x" },
		"place":       func(n *poller.NodeRef, c *tracker.CountedEvent) { c.Nth = 2 },
		// Fields are length-prefixed: moving a byte from one to the next
		// is another event.
		"split": func(n *poller.NodeRef, c *tracker.CountedEvent) { n.Cluster, n.Target = "pro", "d"+n.Target },
	}
	seen := map[string]string{base: "base"}
	for name, change := range variants {
		n, c := ref, tload
		change(&n, &c)
		id := ID(n, c)
		if other, dup := seen[id]; dup {
			t.Errorf("%s gives the id of %s", name, other)
		}
		seen[id] = name
	}
	zero := tload
	zero.HasDuration, zero.Duration = true, 0
	nd := tload
	nd.HasDuration, nd.Duration = false, 0
	if ID(ref, zero) == ID(ref, nd) {
		t.Error("a duration of 0 and no duration give the same id")
	}
}

// A comment may hold anything: the line stays one line of valid JSON
// whose comment reads back (invalid UTF-8 replaced), and a very long one
// is cut at a character boundary.
func TestLineOfAnOddComment(t *testing.T) {
	for _, comment := range []string{"a \"quoted\"\nnew line\t<tag> & \\", "bad \xff\xfe utf-8", strings.Repeat("é", MaxComment)} {
		c := tload
		c.Comment = comment
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(LineOf(ref, c)); err != nil {
			t.Fatal(err)
		}
		if bytes.Count(buf.Bytes(), []byte{'\n'}) != 1 {
			t.Fatalf("comment %.40q: the line is not one line: %q", comment, buf.String())
		}
		var back Line
		if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
			t.Fatalf("comment %.40q: %v", comment, err)
		}
		if !utf8.ValidString(back.Comment) || len(back.Comment) > MaxComment {
			t.Errorf("comment %.40q read back as %.40q (%d bytes)", comment, back.Comment, len(back.Comment))
		}
		if utf8.ValidString(comment) && len(comment) <= MaxComment && back.Comment != comment {
			t.Errorf("comment %q read back as %q", comment, back.Comment)
		}
		if len(comment) > MaxComment && !strings.HasPrefix(comment, back.Comment) {
			t.Errorf("a long comment is not cut to a prefix of itself")
		}
		if back.ID != ID(ref, c) {
			t.Errorf("the id is not made of the whole comment")
		}
	}
}
