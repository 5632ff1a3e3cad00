package store

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// snapshot is every file of a directory with its content.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, p := range filesIn(t, dir) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = b
	}
	return out
}

// A second Open of a state file that is open is refused before it reads or
// writes anything, with the holder named; once the first is closed (its
// process ended), the next Open takes the lock at once.
func TestASecondOpenIsRefusedWithTheHolder(t *testing.T) {
	if !lockSupported {
		t.Skip("no file lock on this platform (lock_none.go)")
	}
	path := filepath.Join(t.TempDir(), "state.json")
	s, _ := open(t, path)
	saveAll(t, s, map[string]*tracker.State{"/a:1": state(5), "/b:1": state(6)})
	before := snapshot(t, filepath.Dir(path))

	s2, _, err := Open(path)
	var inUse *InUseError
	if !errors.As(err, &inUse) || s2 != nil {
		t.Fatalf("second Open: %v, %v; want an *InUseError", s2, err)
	}
	host, _ := os.Hostname()
	if inUse.Path != path || inUse.Lock != path+".lock" || inUse.Holder == nil || *inUse.Holder != (Holder{PID: os.Getpid(), Host: host}) {
		t.Errorf("refusal %+v (holder %+v), want the path, its lock file and this process (pid %d, host %s)", inUse, inUse.Holder, os.Getpid(), host)
	}
	wantMsg := fmt.Sprintf(`state file %q is in use by another process, pid %d on host %s, which holds the lock on %q: `+
		`one process per state file; stop that process, or give this one a state file of its own`, path, os.Getpid(), host, path+".lock")
	if err.Error() != wantMsg || strings.Contains(err.Error(), "\n") {
		t.Errorf("message:\n %s\nwant\n %s", err, wantMsg)
	}
	after := snapshot(t, filepath.Dir(path))
	if len(after) != len(before) {
		t.Errorf("files %v after the refused Open, %v before", slices.Sorted(maps.Keys(after)), slices.Sorted(maps.Keys(before)))
	}
	for name, b := range before {
		if !bytes.Equal(after[name], b) {
			t.Errorf("%s changed by the refused Open", name)
		}
	}
	// The first keeps working: its states are still its own.
	saveAll(t, s, map[string]*tracker.State{"/a:1": state(7), "/b:1": state(8)})

	_, o := restart(t, s, path)
	if got := fmt.Sprint(cursors(o)); got != "map[/a:1:7 /b:1:8]" {
		t.Fatalf("after the first closed: %s", got)
	}
}

// A lock file that names no holder (its holder has just taken it and not
// written yet, or it is not one of ours) still refuses, saying the holder
// is not known.
func TestARefusalWithAnUnknownHolder(t *testing.T) {
	if !lockSupported {
		t.Skip("no file lock on this platform (lock_none.go)")
	}
	path := filepath.Join(t.TempDir(), "state.json")
	open(t, path)
	if err := os.WriteFile(path+".lock", nil, 0o600); err != nil { // truncates; the lock stays held
		t.Fatal(err)
	}
	_, _, err := Open(path)
	var inUse *InUseError
	if !errors.As(err, &inUse) || inUse.Holder != nil || !strings.Contains(err.Error(), "in use by another process (holder not known), which holds the lock on") {
		t.Fatalf("Open: %v", err)
	}
}

// The lock file is the store's own: not a stray slot file removed at
// start, not set aside with an unusable manifest, kept when the manifest is
// deleted, and never replaced (a new file would be a new lock).
func TestTheLockFileStays(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	ino := func() os.FileInfo {
		t.Helper()
		st, err := os.Stat(path + ".lock")
		if err != nil {
			t.Fatalf("the lock file: %v", err)
		}
		return st
	}
	s, _ := open(t, path)
	first := ino()
	saveAll(t, s, map[string]*tracker.State{"/a:1": state(5)})
	s, o := restart(t, s, path)
	if len(o.Removed) != 0 || len(o.SetAsideSlots) != 0 || !os.SameFile(first, ino()) {
		t.Fatalf("after a restart: %+v", o)
	}
	if err := os.Remove(path); err != nil { // the manifest deleted: its slot files go
		t.Fatal(err)
	}
	s, o = restart(t, s, path)
	if len(o.Removed) != 1 || strings.HasSuffix(o.Removed[0], ".lock") || !os.SameFile(first, ino()) {
		t.Fatalf("after the manifest was deleted: removed %v", o.Removed)
	}
	if err := os.WriteFile(path, []byte("not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, o = restart(t, s, path)
	for _, p := range o.SetAsideSlots {
		if strings.Contains(p, ".lock") {
			t.Errorf("the lock file set aside: %v", o.SetAsideSlots)
		}
	}
	if o.Unusable == nil || !os.SameFile(first, ino()) {
		t.Fatalf("after an unusable manifest: %+v", o)
	}
}

// What is at the lock file's path must be a file the store can lock.
func TestALockPathThatIsNotAFileIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	if err := os.Mkdir(path+".lock", 0o700); err != nil {
		t.Fatal(err)
	}
	_, _, err := Open(path)
	if err == nil || !strings.Contains(err.Error(), path+".lock") {
		t.Fatalf("Open with a directory at the lock file's path: %v", err)
	}
	if _, serr := os.Stat(path); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("a manifest written although the lock was not taken: %v", serr)
	}
}
