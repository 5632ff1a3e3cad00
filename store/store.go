// Package store keeps the counting engine's state of every node on disk
// (--events.state-file), so that a restarted exporter resumes where it
// stopped: nothing lost, nothing counted twice.
//
// Its cost follows what changed. Each node has its own file, written only
// when that node's state changed since it was last written: a /probe of one
// node writes that node's file, not the whole fleet's state. A write is on
// disk (fdatasync) before Save returns, so a counter value a scrape showed
// is always in the store.
//
// On disk, for --events.state-file=PATH (docs/state.md):
//
//	PATH                the manifest: the format, and which file holds which node
//	PATH.d/STEM.0       a node's state, two slots written in turn: a write
//	PATH.d/STEM.1       never touches the slot that holds the newest state
//
// A slot is a header line (sequence number, length, CRC-32C) followed by
// the node's state as JSON. It is overwritten in place, so a steady write
// changes no file system metadata; a crash in the middle of a write leaves
// a slot whose checksum fails, and the other slot, one state older, is
// read instead. That state is never older than what a scrape showed: the
// scrape's answer goes out only once the write it waits for is on disk.
//
// A state file of formats 1 and 2 (one JSON document for every node) at
// PATH is migrated by Open and kept as PATH.migrated. A manifest that cannot
// be used is set aside (PATH.unreadable, with the node files as
// PATH.d.unreadable); a node whose files fail their checks is set aside
// alone (STEM.0.unreadable). Either way the nodes concerned start from
// their first contact and the others resume. The store knows the engine's
// state type and nothing of Prometheus or HTTP.
package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// Format is the store's format: a manifest and a file per node. Formats 1
// and 2 were one JSON document holding every node; Open migrates them.
const Format = 3

// Store is an open state store. Its methods are safe for concurrent use:
// writes of different nodes run side by side, writes of one node one after
// the other.
type Store struct {
	path string // the manifest
	dir  string // the node files
	seed maphash.Seed

	mu     sync.Mutex // guards nodes, listed, stems and the manifest file
	nodes  map[string]*node
	listed map[string]string // key -> stem, as in the manifest on disk
	stems  map[string]string // stem -> key, of every node known

	writes, written, failures atomic.Uint64
}

// node is what the store knows of one node's files.
type node struct {
	key, stem string

	mu     sync.Mutex  // one write of the node at a time
	onDisk atomic.Bool // a slot holds a state (read without mu by list)
	seq    uint64      // sequence number of the newest slot on disk (0: none)
	size   [2]int      // bytes in each slot file (0: no file yet)
	last   *tracker.State
	hash   uint64 // of the newest payload on disk
}

// Node is a node as SaveAll sees it: its key (stable across restarts) and
// how to read its committed state at the moment of the write (nil or not
// contacted: nothing to save yet). State is read under the node's write
// lock, so the newest of two concurrent writes is the one left on disk.
type Node struct {
	Key   string
	State func() *tracker.State
}

// Stats counts the store's node writes since Open.
type Stats struct {
	Writes   uint64 // node states written (each fdatasync'ed)
	Bytes    uint64 // bytes of those writes
	Failures uint64 // writes that failed (node files and manifest)
}

// Stats returns the store's counts.
func (s *Store) Stats() Stats {
	return Stats{Writes: s.writes.Load(), Bytes: s.written.Load(), Failures: s.failures.Load()}
}

// Path is the manifest's path (--events.state-file), Dir the node files'.
func (s *Store) Path() string { return s.path }

// Dir is the directory of the node files.
func (s *Store) Dir() string { return s.dir }

// nodeFor returns the node of key, creating it (unlisted) if needed.
func (s *Store) nodeFor(key string) *node {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.nodes[key]; n != nil {
		return n
	}
	n := &node{key: key, stem: s.newStem(key)}
	s.nodes[key] = n
	s.stems[n.stem] = key
	return n
}

// Save writes the node's state if it changed since it was last written,
// and lists the node in the manifest at its first write. It returns once
// the state is on disk.
func (s *Store) Save(key string, state func() *tracker.State) error {
	n := s.nodeFor(key)
	if err := s.save(n, state); err != nil {
		return err
	}
	return s.list([]*node{n}, nil)
}

// SaveAll writes every node whose state changed, several at a time, lists
// the new ones and drops from the store the nodes not in nodes (no longer
// configured), in one manifest write. It returns once all is on disk; the
// first error is returned, the other nodes are still written.
func (s *Store) SaveAll(nodes []Node) error {
	const workers = 8 // fdatasync waits: a few at once let the file system batch them
	all := make([]*node, len(nodes))
	for i, nd := range nodes {
		all[i] = s.nodeFor(nd.Key)
	}
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range min(workers, len(nodes)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(nodes); i = int(next.Add(1) - 1) {
				errs[i] = s.save(all[i], nodes[i].State)
			}
		}()
	}
	wg.Wait()
	keep := make(map[string]bool, len(nodes))
	for _, nd := range nodes {
		keep[nd.Key] = true
	}
	return errors.Join(append(errs, s.list(all, keep))...)
}

// save writes n's state if it changed since its last write.
func (s *Store) save(n *node, state func() *tracker.State) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	st := state()
	if st == nil || !st.Contacted || st == n.last {
		return nil // committed states are never modified: same pointer, same state
	}
	buf := bufPool.Get().(*bytes.Buffer)
	defer bufPool.Put(buf)
	buf.Reset()
	if err := encodePayload(buf, n.key, st); err != nil {
		return fmt.Errorf("state of node %s: encoding: %w", n.key, err)
	}
	h := maphash.Bytes(s.seed, buf.Bytes())
	if n.seq > 0 && h == n.hash {
		n.last = st // a new state, the same content: nothing to write
		return nil
	}
	size, err := s.writeSlot(n, buf.Bytes())
	if err != nil {
		s.failures.Add(1)
		return err
	}
	s.writes.Add(1)
	s.written.Add(uint64(size))
	n.last, n.hash = st, h
	return nil
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// writeSlot writes payload in place into the slot that does not hold the
// newest state, and syncs it.
func (s *Store) writeSlot(n *node, payload []byte) (int, error) {
	seq := n.seq + 1
	slot := int(seq % 2)
	rec := appendRecord(make([]byte, 0, headerMax+len(payload)), seq, payload)
	// Pad a shorter record with blanks over the older one's tail (read as
	// trailing space): the file keeps its size, so the write changes no
	// metadata and fdatasync has only the data to flush.
	for len(rec) < n.size[slot] {
		rec = append(rec, ' ')
	}
	name := slotPath(s.dir, n.stem, slot)
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return 0, fmt.Errorf("state of node %s: %w", n.key, err)
	}
	_, err = f.WriteAt(rec, 0)
	if err == nil {
		err = datasync(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// The slot may hold half a record: its checksum fails, the other
		// slot still holds the newest state on disk.
		return 0, fmt.Errorf("state of node %s: writing %s: %w", n.key, name, unwrapPath(err))
	}
	if n.size[slot] == 0 {
		syncDir(s.dir) // a new file: its name must survive a power cut too
	}
	n.size[slot] = max(n.size[slot], len(rec))
	n.seq = seq
	n.onDisk.Store(true)
	return len(rec), nil
}

// list adds the nodes written but not yet listed to the manifest and, when
// keep is not nil, drops the listed nodes not in keep (their files go once
// the manifest no longer names them).
func (s *Store) list(nodes []*node, keep map[string]bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := false
	for _, n := range nodes {
		if _, ok := s.listed[n.key]; !ok && n.onDisk.Load() {
			s.listed[n.key] = n.stem
			changed = true
		}
	}
	var dropped []*node
	if keep != nil {
		for key := range s.listed {
			if !keep[key] {
				delete(s.listed, key)
				if n := s.nodes[key]; n != nil {
					dropped = append(dropped, n)
					delete(s.nodes, key)
					delete(s.stems, n.stem)
				}
				changed = true
			}
		}
	}
	if !changed {
		return nil
	}
	if err := writeManifest(s.path, s.dir, s.listed); err != nil {
		s.failures.Add(1)
		return err
	}
	for _, n := range dropped {
		for slot := range 2 {
			os.Remove(slotPath(s.dir, n.stem, slot))
		}
	}
	return nil
}

// encodePayload writes a node's record payload: its key and state, JSON.
func encodePayload(buf *bytes.Buffer, key string, st *tracker.State) error {
	k, err := json.Marshal(key)
	if err != nil {
		return err
	}
	buf.WriteString(`{"key":`)
	buf.Write(k)
	buf.WriteString(`,"state":`)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(st); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1) // Encode's newline
	buf.WriteString("}\n")
	return nil
}

// payload is a node record's content.
type payload struct {
	Key   string         `json:"key"`
	State *tracker.State `json:"state"`
}

func slotPath(dir, stem string, slot int) string {
	return filepath.Join(dir, fmt.Sprintf("%s.%d", stem, slot))
}

// unwrapPath drops the *os.PathError or *os.LinkError wrapper, whose paths
// our messages already name.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
