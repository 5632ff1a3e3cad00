package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/indexima-exporter/indexima_exporter/tally"
	"github.com/indexima-exporter/indexima_exporter/tracker"
)

func state(cursor int64) *tracker.State {
	return &tracker.State{Contacted: true, Cursor: cursor, Floor: cursor - 10, Origin: cursor - 10,
		Tally: tally.Tally{Events: map[string]uint64{"TABLE_LOADED": uint64(cursor)}}}
}

// open opens the store at path, closed at the end of the test.
func open(t *testing.T, path string) (*Store, Opened) {
	t.Helper()
	s, o, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, o
}

// restart closes s, as a process ends (its lock released: another Open
// may take it), and opens the store at path again.
func restart(t *testing.T, s *Store, path string) (*Store, Opened) {
	t.Helper()
	s.Close()
	return open(t, path)
}

func fixed(st *tracker.State) func() *tracker.State { return func() *tracker.State { return st } }

func saveAll(t *testing.T, s *Store, states map[string]*tracker.State) {
	t.Helper()
	var nodes []Node
	for k, st := range states {
		nodes = append(nodes, Node{Key: k, State: fixed(st)})
	}
	if _, err := s.SaveAll(nodes); err != nil {
		t.Fatal(err)
	}
}

func cursors(o Opened) map[string]int64 {
	m := map[string]int64{}
	for k, st := range o.States {
		m[k] = st.Cursor
	}
	return m
}

func TestRoundTripAndPermissions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s, o := open(t, path)
	if o.Found || len(o.States) != 0 {
		t.Fatalf("a new store found %+v", o)
	}
	saveAll(t, s, map[string]*tracker.State{"/a:9999": state(100), "c1/b:9999": state(200), "/new:1": {}})
	_, o = restart(t, s, path)
	if got := fmt.Sprint(cursors(o)); got != "map[/a:9999:100 c1/b:9999:200]" || !o.Found {
		t.Fatalf("restored %s (found %v)", got, o.Found)
	}
	for _, p := range filesIn(t, filepath.Dir(path)) {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if perm := st.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("%s mode %v: readable by others", p, perm)
		}
	}
}

func filesIn(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, filepath.Join(dir, e.Name()))
	}
	return out
}

// The cost follows what changed: a node whose state is the same pointer,
// or the same content, is not written; a changed node writes its own
// state only.
func TestOnlyChangedNodesAreWritten(t *testing.T) {
	s, _ := open(t, filepath.Join(t.TempDir(), "state.json"))
	states := map[string]*tracker.State{}
	for i := range 50 {
		states[fmt.Sprintf("/n%d:9999", i)] = state(int64(1000 + i))
	}
	saveAll(t, s, states)
	if got := s.Stats().Writes; got != 50 {
		t.Fatalf("%d writes for 50 new nodes", got)
	}
	before := s.Stats()
	saveAll(t, s, states)
	states["/n7:9999"] = state(1007) // a new state, the same content
	saveAll(t, s, states)
	if got := s.Stats().Writes - before.Writes; got != 0 {
		t.Fatalf("%d writes with nothing changed", got)
	}
	states["/n7:9999"] = state(5000)
	saveAll(t, s, states)
	if err := s.Save("/n8:9999", fixed(state(6000))); err != nil {
		t.Fatal(err)
	}
	after := s.Stats()
	if got := after.Writes - before.Writes; got != 2 {
		t.Fatalf("%d writes for 2 changed nodes", got)
	}
	if per := (after.Bytes - before.Bytes) / 2; per > before.Bytes/50*2 {
		t.Errorf("%d bytes per changed node, %d per node at first: more than the node's own state", per, before.Bytes/50)
	}
}

// A write cut short by a crash leaves a slot whose checksum fails: the
// other slot, one state older, is read. Both slots bad: that node is set
// aside and the others are restored.
func TestTornWriteFallsBackAndDamagedNodeIsSetAside(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s, _ := open(t, path)
	for _, c := range []int64{100, 101, 102} {
		saveAll(t, s, map[string]*tracker.State{"/a:9999": state(c), "/b:9999": state(c + 1000)})
	}
	slotFile := s.SlotFile()
	n := s.nodes["/a:9999"]
	f, err := os.OpenFile(slotFile, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The newest slot's record cut short: its second half never written.
	if _, err := f.WriteAt(make([]byte, 200), n.at+int64(n.seq%2)*int64(n.size)+100); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s2, o := restart(t, s, path)
	if got := cursors(o); got["/a:9999"] != 101 || got["/b:9999"] != 1102 || len(o.Damaged) != 0 {
		t.Fatalf("after a torn write: %v, damaged %v", got, o.Damaged)
	}
	// The next write goes to the torn slot, not over the good one.
	saveAll(t, s2, map[string]*tracker.State{"/a:9999": state(103), "/b:9999": state(1102)})
	s3, o := restart(t, s2, path)
	if cursors(o)["/a:9999"] != 103 {
		t.Fatalf("after a write over the torn slot: %v", cursors(o))
	}

	n = s3.nodes["/a:9999"]
	f, err = os.OpenFile(s3.SlotFile(), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for slot := range 2 {
		if _, err := f.WriteAt([]byte("garbage\n{}"), n.at+int64(slot)*int64(n.size)); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	s4, o := restart(t, s3, path)
	if got := cursors(o); len(got) != 1 || got["/b:9999"] != 1102 || o.Damaged["/a:9999"] == nil {
		t.Fatalf("both slots damaged: restored %v, damaged %v", got, o.Damaged)
	}
	if len(o.SetAsideSlots) != 1 || o.SetAsideSlots[0] != s3.SlotFile()+".unreadable" {
		t.Errorf("the slot file holding the damaged node not kept: %v", o.SetAsideSlots)
	}
	if _, o = restart(t, s4, path); len(o.Damaged) != 0 || len(o.States) != 1 {
		t.Errorf("the damaged node is still listed: %+v", o)
	}
}

// A state that outgrows its slots moves to a new region; the manifest,
// written before Save returns, names it.
func TestAStateOutgrowingItsSlotsMoves(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s, _ := open(t, path)
	saveAll(t, s, map[string]*tracker.State{"/a:1": state(5), "/b:1": state(6)})
	big := state(7)
	for i := range 2000 {
		big.Events[fmt.Sprintf("TYPE_%d", i)] = uint64(i)
	}
	at := s.nodes["/a:1"].at
	if err := s.Save("/a:1", fixed(big)); err != nil {
		t.Fatal(err)
	}
	if s.nodes["/a:1"].at == at {
		t.Fatalf("the node did not move")
	}
	_, o := restart(t, s, path)
	if got := o.States["/a:1"]; got == nil || len(got.Events) != 2001 || cursors(o)["/b:1"] != 6 {
		t.Fatalf("after the move: %v", cursors(o))
	}
}

func TestMigratesAnOlderStateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	old := `{"version":2,"nodes":{"/a:9999":{"contacted":true,"cursor":42,"floor":40},"c/b:1":{"contacted":true,"cursor":7},"/none:1":null,"/fresh:1":{"contacted":false}}}`
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	// What an interrupted migration left: replaced, the migration done again.
	if err := os.WriteFile(path+".slots.1", []byte("half a migration"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, o := open(t, path)
	if got := fmt.Sprint(cursors(o)); got != "map[/a:9999:42 c/b:1:7]" || o.Migrated != path+".migrated" || !o.Found {
		t.Fatalf("migrated %s, %+v", got, o)
	}
	if b, err := os.ReadFile(path + ".migrated"); err != nil || string(b) != old {
		t.Errorf("old file not kept: %q %v", b, err)
	}
	if got := len(filesIn(t, filepath.Dir(path))); got != 4 {
		t.Errorf("%d files, want the manifest, the slot file, the migrated file and the lock file", got)
	}
	_, o = restart(t, s, path)
	if got := fmt.Sprint(cursors(o)); got != "map[/a:9999:42 c/b:1:7]" || o.Migrated != "" {
		t.Fatalf("after the migration: %s, %+v", got, o)
	}
}

func TestUnusableStateIsSetAside(t *testing.T) {
	for name, content := range map[string]string{
		"garbage":        "this is not json",
		"empty":          "",
		"array":          "[]",
		"future version": `{"version":99}`,
		"bad region":     `{"format":3,"slot_file":"state.json.slots.1","nodes":{"/a:1":{"at":-4096,"size":4096}}}`,
		"overlap":        `{"format":3,"slot_file":"state.json.slots.1","nodes":{"/a:1":{"at":0,"size":8192},"/b:1":{"at":8192,"size":8192}}}`,
		"other file":     `{"format":3,"slot_file":"../passwd","nodes":{}}`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.json")
			s, _ := open(t, path)
			saveAll(t, s, map[string]*tracker.State{"/a:1": state(5)})
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			s, o := restart(t, s, path)
			if o.Unusable == nil || o.SetAside != path+".unreadable" || len(o.SetAsideSlots) != 1 || len(o.States) != 0 {
				t.Fatalf("%+v", o)
			}
			if b, err := os.ReadFile(o.SetAside); err != nil || string(b) != content {
				t.Errorf("set aside: %q %v", b, err)
			}
			if _, o = restart(t, s, path); o.Unusable != nil || !o.Found || len(o.States) != 0 {
				t.Errorf("no fresh store: %+v", o)
			}
		})
	}
}

func TestManifestDeletedStartsAfresh(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s, _ := open(t, path)
	saveAll(t, s, map[string]*tracker.State{"/a:1": state(5)})
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	_, o := restart(t, s, path)
	if o.Found || len(o.States) != 0 || len(o.Removed) != 1 || len(filesIn(t, filepath.Dir(path))) != 3 {
		t.Fatalf("%+v", o)
	}
}

func TestRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("Open of a directory: %v", err)
	}
	if _, _, err := Open(filepath.Join(dir, "missing", "state.json")); err == nil {
		t.Fatalf("Open in a missing directory: no error")
	}
}

// Nodes no longer configured are dropped at the next SaveAll: out of the
// manifest, and out of the slot file at the next start. SaveAll names each
// dropped state once, those read at start included; a key never written
// had no state to drop.
func TestSaveAllDropsNodesNoLongerConfigured(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s, _ := open(t, path)
	saveAll(t, s, map[string]*tracker.State{"/a:1": state(5), "/b:1": state(6), "/c:1": state(7), "/d:1": state(8)})
	if err := s.Save("/never:1", fixed(nil)); err != nil {
		t.Fatal(err)
	}
	dropped, err := s.SaveAll([]Node{{Key: "/a:1", State: fixed(state(5))}, {Key: "/c:1", State: fixed(state(7))}, {Key: "/d:1", State: fixed(state(8))}})
	if err != nil || fmt.Sprint(dropped) != "[/b:1]" {
		t.Fatalf("dropped %v, %v; want [/b:1]", dropped, err)
	}
	if dropped, err = s.SaveAll([]Node{{Key: "/a:1", State: fixed(state(5))}, {Key: "/c:1", State: fixed(state(7))}, {Key: "/d:1", State: fixed(state(8))}}); err != nil || len(dropped) != 0 {
		t.Fatalf("dropped again: %v, %v", dropped, err)
	}
	s, o := restart(t, s, path)
	if fmt.Sprint(cursors(o)) != "map[/a:1:5 /c:1:7 /d:1:8]" {
		t.Fatalf("%v", cursors(o))
	}
	// At start: what the manifest lists and the configuration no longer has.
	dropped, err = s.SaveAll([]Node{{Key: "/a:1", State: fixed(o.States["/a:1"])}})
	if err != nil || fmt.Sprint(dropped) != "[/c:1 /d:1]" {
		t.Fatalf("dropped at start %v, %v; want [/c:1 /d:1]", dropped, err)
	}
	if _, o = restart(t, s, path); fmt.Sprint(cursors(o)) != "map[/a:1:5]" {
		t.Fatalf("%v", cursors(o))
	}
}

// Writes of one node from concurrent scrapes leave the newest state on
// disk: the state is read under the node's write lock.
func TestConcurrentSavesKeepTheNewest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s, _ := open(t, path)
	var mu sync.Mutex
	var cur int64
	current := func() *tracker.State {
		mu.Lock()
		defer mu.Unlock()
		return state(cur)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				mu.Lock()
				cur++
				mu.Unlock()
				if err := s.Save("/a:1", current); err != nil {
					t.Error(err)
				}
				if err := s.Save(fmt.Sprintf("/g%d:1", g), fixed(state(int64(i+1)))); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	_, o := restart(t, s, path)
	if got := cursors(o); got["/a:1"] != 160 || len(got) != 9 || got["/g3:1"] != 20 {
		t.Fatalf("%v", got)
	}
}

// A node configured twice (one key) is written once, without deadlock.
func TestSaveAllWithAKeyTwice(t *testing.T) {
	s, _ := open(t, filepath.Join(t.TempDir(), "state.json"))
	if _, err := s.SaveAll([]Node{{Key: "/a:1", State: fixed(state(5))}, {Key: "/a:1", State: fixed(state(6))}}); err != nil {
		t.Fatal(err)
	}
	if got := s.Stats(); got.Writes != 1 || got.Syncs != 1 {
		t.Fatalf("%+v", got)
	}
}
