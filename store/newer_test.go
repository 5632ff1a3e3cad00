package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// overwriteNode writes payload as the newest record of a node, in its
// region of the slot file the manifest names (as a newer version would).
func overwriteNode(t *testing.T, path, payload string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(filepath.Dir(path), m.SlotFile), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, r := range m.Nodes {
		const seq = 99
		if _, err := f.WriteAt(appendRecord(nil, seq, []byte(payload)), r.At+int64(seq%2)*int64(r.Size)); err != nil {
			t.Fatal(err)
		}
	}
}

// A state a newer version wrote (a manifest format, a node's state schema,
// or a field of a node's state this version does not know) is refused whole with one line
// naming the file and what to do, and nothing on disk changes: neither set
// aside nor read with what this version knows, which would lose the rest
// at the next write. A state of this version's schema with what it knows
// reads.
func TestNewerStateIsRefused(t *testing.T) {
	node := `{"key":"/a:1","state":`
	for name, c := range map[string]struct {
		manifest, record, want string
	}{
		"manifest format":    {manifest: `{"format":4,"slot_file":"state.json.slots.9","nodes":{},"lock":"x"}`, want: "store format 4; this version reads 3"},
		"state schema":       {record: node + `{"schema":3,"contacted":true,"cursor":5}}`, want: "node /a:1; state schema 3; this version knows up to 2"},
		"state field":        {record: node + `{"schema":2,"contacted":true,"cursor":5,"node_down_reasons":{"c":"x"}}}`, want: `node /a:1; a field this version does not know, "node_down_reasons"`},
		"nested state field": {record: node + `{"contacted":true,"cursor":5,"check":{"sealed":1,"drift":2}}}`, want: `a field this version does not know, "drift"`},
		"payload field":      {record: `{"key":"/a:1","version":"9.0","state":{"contacted":true,"cursor":5}}`, want: `a field this version does not know, "version"`},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.json")
			s, _ := open(t, path)
			saveAll(t, s, map[string]*tracker.State{"/a:1": state(5)})
			s.Close()
			if c.manifest != "" {
				if err := os.WriteFile(path, []byte(c.manifest), 0o600); err != nil {
					t.Fatal(err)
				}
			} else {
				overwriteNode(t, path, c.record)
			}
			before := snapshot(t, dir)
			_, _, err := Open(path)
			var newer *NewerError
			if !errors.As(err, &newer) {
				t.Fatalf("Open: %v, want a NewerError", err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.Contains(msg, `"`+path+`"`) || !strings.Contains(msg, "newer version") ||
				!strings.Contains(msg, "run that version") || !strings.Contains(msg, path+".slots.*") {
				t.Errorf("message %q: want one line naming the file and what to do", msg)
			}
			for _, part := range strings.Split(c.want, "; ") {
				if !strings.Contains(msg, part) {
					t.Errorf("message %q: does not say %q", msg, part)
				}
			}
			after := snapshot(t, dir)
			// (The lock file is the process's, not the state's.)
			delete(before, "state.json"+LockSuffix)
			delete(after, "state.json"+LockSuffix)
			if !maps.EqualFunc(before, after, bytes.Equal) {
				t.Errorf("the files changed: %d before, %d after", len(before), len(after))
			}
		})
	}

	// This version's own schema, and an earlier version's (no schema),
	// read.
	for _, rec := range []string{node + `{"schema":2,"contacted":true,"cursor":5,"relearn_node_down":true}}`, node + `{"contacted":true,"cursor":6}}`} {
		path := filepath.Join(t.TempDir(), "state.json")
		s, _ := open(t, path)
		saveAll(t, s, map[string]*tracker.State{"/a:1": state(5)})
		s.Close()
		overwriteNode(t, path, rec)
		s, o := open(t, path)
		s.Close()
		if st := o.States["/a:1"]; st == nil || len(o.Damaged) != 0 || st.Cursor < 5 {
			t.Errorf("record %s: states %+v, damaged %v", rec, o.States, o.Damaged)
		}
	}
}
