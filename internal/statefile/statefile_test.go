package statefile

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

type doc struct {
	Cursor int64             `json:"cursor"`
	Nodes  map[string]uint64 `json:"nodes"`
}

func TestSaveLoadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	want := doc{Cursor: 1763779200123, Nodes: map[string]uint64{"a:9999": 7, "b:9999": 0}}
	if err := Save(path, want); err != nil {
		t.Fatal(err)
	}
	var got doc
	ok, err := Load(path, &got)
	if err != nil || !ok {
		t.Fatalf("Load = %v, %v", ok, err)
	}
	if got.Cursor != want.Cursor || len(got.Nodes) != 2 || got.Nodes["a:9999"] != 7 {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		t.Errorf("state file mode %v: readable by others", perm)
	}
	assertNoTemporaries(t, filepath.Dir(path))
}

func TestLoadMissingFileIsFirstStart(t *testing.T) {
	var d doc
	ok, err := Load(filepath.Join(t.TempDir(), "none.json"), &d)
	if ok || err != nil {
		t.Fatalf("Load of a missing file = %v, %v; want false, nil", ok, err)
	}
}

func TestLoadRefusesGarbage(t *testing.T) {
	dir := t.TempDir()
	cases := map[string][]byte{
		"truncated": []byte(`{"cursor": 12`),
		"binary":    {0xff, 0xfe, 0, 1, 2},
		"empty":     {},
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			var d doc
			ok, err := Load(path, &d)
			if ok || err == nil {
				t.Fatalf("Load = %v, %v; want an error", ok, err)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
	t.Run("directory", func(t *testing.T) {
		var d doc
		if _, err := Load(dir, &d); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("Load of a directory: %v", err)
		}
	})
}

// A failed save leaves the previous file whole.
func TestFailedSaveKeepsOldFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	if err := Save(path, doc{Cursor: 1}); err != nil {
		t.Fatal(err)
	}
	if err := Save(path, map[string]any{"bad": make(chan int)}); err == nil {
		t.Fatal("saving an unencodable value succeeded")
	}
	var d doc
	if ok, err := Load(path, &d); !ok || err != nil || d.Cursor != 1 {
		t.Fatalf("after a failed save: %v %v %+v", ok, err, d)
	}
	if err := Save(filepath.Join(path, "sub", "x.json"), doc{}); err == nil {
		t.Fatal("saving into a missing directory succeeded")
	}
	assertNoTemporaries(t, filepath.Dir(path))
}

// Concurrent savers (two scrapes finishing together) each replace the file
// whole: whatever wins, a reader never sees a mix or a partial file.
func TestConcurrentSavesAreWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	big := func(i int) doc {
		d := doc{Cursor: int64(i), Nodes: map[string]uint64{}}
		for k := 0; k < 500; k++ {
			d.Nodes[strings.Repeat("n", 20)+string(rune('a'+k%26))+string(rune('a'+k/26))] = uint64(i)
		}
		return d
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var readErr error
	var readers sync.WaitGroup
	readers.Add(1)
	go func() {
		defer readers.Done()
		for i := 0; i < 2000; i++ {
			select {
			case <-stop:
				return
			default:
			}
			data, err := os.ReadFile(path)
			if os.IsNotExist(err) {
				continue
			}
			var d doc
			if err == nil {
				err = json.Unmarshal(data, &d)
			}
			if err == nil {
				for _, v := range d.Nodes {
					if int64(v) != d.Cursor {
						err = os.ErrInvalid
					}
				}
			}
			if err != nil {
				readErr = err
				return
			}
		}
	}()
	for i := 1; i <= 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				if err := Save(path, big(i)); err != nil {
					t.Error(err)
					return
				}
			}
		}(i)
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	if readErr != nil {
		t.Fatalf("a reader saw a partial or mixed file: %v", readErr)
	}
	assertNoTemporaries(t, filepath.Dir(path))
}

func assertNoTemporaries(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestWriteWithReadWith(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	if ok, err := ReadWith(path, func(io.Reader) error { t.Fatal("read called for a missing file"); return nil }); ok || err != nil {
		t.Fatalf("ReadWith of a missing file = %v, %v", ok, err)
	}
	if err := WriteWith(path, func(w io.Writer) error { _, err := io.WriteString(w, `{"v":1}`); return err }); err != nil {
		t.Fatal(err)
	}
	// A failing encoder leaves the file as it was.
	if err := WriteWith(path, func(w io.Writer) error { io.WriteString(w, "half"); return errors.New("boom") }); err == nil {
		t.Fatal("WriteWith with a failing encoder succeeded")
	}
	var got string
	ok, err := ReadWith(path, func(r io.Reader) error { b, err := io.ReadAll(r); got = string(b); return err })
	if !ok || err != nil || got != `{"v":1}` {
		t.Fatalf("ReadWith = %v, %v, %q", ok, err, got)
	}
	if _, err := ReadWith(path, func(io.Reader) error { return errors.New("bad version") }); err == nil || !strings.Contains(err.Error(), "bad version") {
		t.Fatalf("decoder error not returned: %v", err)
	}
	assertNoTemporaries(t, filepath.Dir(path))
}
