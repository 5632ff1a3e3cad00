// Package store keeps the counting engine's state of every node on disk
// (--events.state-file), so that a restarted exporter resumes where it
// stopped: nothing lost, nothing counted twice.
//
// Its cost follows what changed. Each node has a region of its own in one
// slot file, written only when that node's state changed since it was last
// written: a /probe of one node writes that node's state, not the whole
// fleet's. A write is on disk (fdatasync) before Save returns, so a counter
// value a scrape showed is always in the store; writes that arrive
// together (16 probes at once, the nodes of one /metrics scrape) share one
// fdatasync.
//
// On disk, for --events.state-file=PATH (docs/state.md):
//
//	PATH            the manifest (JSON): the slot file's name and each
//	                node's region in it; rewritten only when the set of
//	                nodes changes or a node outgrows its region
//	PATH.slots.GEN  the slot file: per node, two slots written in turn, so
//	                a write never touches the slot that holds the newest state
//	PATH.lock       the lock file: one process has the store open, from
//	                before Open reads anything until it ends (lock.go)
//
// A slot is a header line (sequence number, length, CRC-32C) followed by
// the node's key and state as JSON. It is overwritten in place: a steady
// write changes no file system metadata. A crash in the middle of a write
// leaves a slot whose checksum fails, and the other slot, one state older,
// is read instead; that state is never older than what a scrape showed,
// since the scrape's answer goes out only once its write is on disk.
//
// Open rewrites the slot file compactly (a new generation, then the
// manifest naming it), so what a crash or a removed node left is gone at
// each start. A state file of formats 1 and 2 (one JSON document for every
// node) at PATH is migrated the same way and kept as PATH.migrated. A
// manifest that cannot be used is set aside (PATH.unreadable) and every
// node starts from its first contact; a node whose slots both fail their
// checks starts alone from its first contact, the slot file that held it
// kept as *.unreadable. A store a newer version wrote (a manifest format,
// a node's state schema, tracker.Schema, or a field of a node's state this
// version does not know) is refused whole, nothing on disk changed (NewerError): read with
// what this version knows, it would lose the rest at the next write. The
// store knows the engine's state type and nothing of Prometheus or HTTP.
package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/fserr"
	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// Format is the store's format: a manifest and a slot file. Formats 1 and
// 2 were one JSON document holding every node; Open migrates them.
const Format = 3

const (
	align   = 4096 // regions start and slots are sized on page boundaries: a torn page is one slot's
	minSlot = 8192 // the smallest slot: room for a node's state to grow a little
)

// Store is an open state store. Its methods are safe for concurrent use:
// writes of different nodes run side by side, writes of one node one after
// the other.
type Store struct {
	path string // the manifest
	seed maphash.Seed

	lock *fileLock // held from Open to Close
	f    *os.File  // the slot file
	name string    // its base name, in the manifest
	gen  int
	sync groupSync

	mmu   sync.Mutex // one manifest write at a time
	mu    sync.Mutex // guards nodes and end
	nodes map[string]*node
	end   int64 // where the next region goes

	writes, written, failures atomic.Uint64
}

// node is what the store knows of one node's region.
type node struct {
	key string

	mu     sync.Mutex // one write of the node at a time
	at     int64      // the region's offset; slot i at at + i*size
	size   int        // a slot's size (0: no region yet)
	seq    uint64     // sequence number of the newest slot on disk (0: none)
	listed bool       // the manifest on disk names this region
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

// Stats counts the store's writes since Open.
type Stats struct {
	Writes   uint64 // node states written (each on disk before its save returned)
	Bytes    uint64 // bytes of those writes
	Syncs    uint64 // fdatasyncs of the slot file (writes made together share one)
	Failures uint64 // writes that failed (slot file and manifest)
}

// Stats returns the store's counts.
func (s *Store) Stats() Stats {
	return Stats{Writes: s.writes.Load(), Bytes: s.written.Load(), Syncs: s.sync.syncs.Load(), Failures: s.failures.Load()}
}

// Path is the manifest's path (--events.state-file).
func (s *Store) Path() string { return s.path }

// SlotFile is the slot file's path.
func (s *Store) SlotFile() string { return s.path + "." + slotSuffix(s.gen) }

// Close closes the slot file and releases the state file's lock. Saves
// after Close fail.
func (s *Store) Close() error { return errors.Join(s.f.Close(), s.lock.release()) }

// nodeFor returns the node of key, creating it (no region yet) if needed.
func (s *Store) nodeFor(key string) *node {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.nodes[key]; n != nil {
		return n
	}
	n := &node{key: key}
	s.nodes[key] = n
	return n
}

// Save writes the node's state if it changed since it was last written. It
// returns once the state is on disk, and the manifest too when the node
// got a new region (its first write, or a state outgrowing its slots).
// Saves of different nodes made at the same time share one fdatasync.
func (s *Store) Save(key string, state func() *tracker.State) error {
	n := s.nodeFor(key)
	n.mu.Lock()
	w, err := s.write(n, state, true)
	if err == nil && w != nil {
		err = s.syncWrites([]*pending{w}, true)
		w.release()
	}
	n.mu.Unlock()
	if err != nil || w == nil || !w.moved {
		return err
	}
	return s.writeManifest()
}

// SaveAll writes every node whose state changed, then syncs them with one
// fdatasync, then rewrites the manifest if a node got a new region or a
// listed node is not in nodes (no longer configured: dropped). It returns
// once all is on disk, with the keys of the nodes whose saved state it
// dropped (each once: a dropped node is no longer the store's). A node
// whose write fails is reported; the others are still written.
func (s *Store) SaveAll(nodes []Node) (dropped []string, err error) {
	keep := make(map[string]bool, len(nodes))
	var errs []error
	var ws []*pending
	moved := false
	for _, nd := range nodes {
		if keep[nd.Key] {
			continue // a node configured twice: its first runtime's state
		}
		keep[nd.Key] = true
		n := s.nodeFor(nd.Key)
		n.mu.Lock() // held until the sync: a probe of the node waits for it
		w, err := s.write(n, nd.State, false)
		if err != nil || w == nil {
			n.mu.Unlock()
			errs = append(errs, err)
			continue
		}
		ws = append(ws, w)
		moved = moved || w.moved
	}
	if len(ws) > 0 {
		errs = append(errs, s.syncWrites(ws, false))
		for _, w := range ws {
			w.n.mu.Unlock()
		}
	}
	s.mu.Lock()
	for key, n := range s.nodes {
		if !keep[key] {
			delete(s.nodes, key)
			if n.seq > 0 { // a state on disk (none: a key never written)
				dropped = append(dropped, key)
			}
		}
	}
	s.mu.Unlock()
	sort.Strings(dropped)
	if moved || len(dropped) > 0 {
		errs = append(errs, s.writeManifest())
	}
	return dropped, errors.Join(errs...)
}

// pending is a node's state written (or to be written by the sync that
// commits it, groupSync), not yet synced.
type pending struct {
	n     *node
	seq   uint64
	st    *tracker.State
	hash  uint64
	bytes int
	moved bool // a new region: the manifest must name it

	rec *[]byte // the record, when the sync writes it (nil: written)
	off int64   // where

	// Set by the sync that committed it (groupSync.mu).
	done       bool
	werr, serr error // the write failed; the sync failed
}

// release returns the record's buffer.
func (w *pending) release() {
	if w.rec != nil {
		recPool.Put(w.rec)
		w.rec = nil
	}
}

// write writes n's state (n.mu held) into the slot that does not hold its
// newest state on disk, if the state changed since its last write; nil
// when there is nothing to write. deferred: the record is left to the sync
// that commits it (a single node's save: groupSync).
func (s *Store) write(n *node, state func() *tracker.State, deferred bool) (*pending, error) {
	st := state()
	if st == nil || !st.Contacted || st == n.last {
		return nil, nil // committed states are never modified: same pointer, same state
	}
	buf := bufPool.Get().(*bytes.Buffer)
	defer bufPool.Put(buf)
	buf.Reset()
	if err := encodePayload(buf, n.key, st); err != nil {
		return nil, fmt.Errorf("state of node %s: encoding: %w", n.key, err)
	}
	h := maphash.Bytes(s.seed, buf.Bytes())
	if n.seq > 0 && h == n.hash && n.listed {
		n.last = st // a new state, the same content: nothing to write
		return nil, nil
	}
	rp := recPool.Get().(*[]byte)
	rec := appendRecord((*rp)[:0], n.seq+1, buf.Bytes())
	*rp = rec
	w := &pending{n: n, seq: n.seq + 1, st: st, hash: h, bytes: len(rec), moved: !n.listed, rec: rp}
	if len(rec) > n.size {
		// A new node, or a state that outgrew its slots: a new region at
		// the end of the file. The old one is left unused until Open
		// rewrites the file; the manifest, written before the save
		// returns, names the new one.
		size := slotSize(len(rec))
		s.mu.Lock()
		n.at, n.size = s.end, size
		s.end += 2 * int64(size)
		s.mu.Unlock()
		n.listed, w.moved = false, true
	}
	w.off = n.at + int64(w.seq%2)*int64(n.size)
	if deferred {
		return w, nil
	}
	defer w.release()
	if _, err := s.f.WriteAt(rec, w.off); err != nil {
		s.failures.Add(1)
		return nil, s.writeError(w, err)
	}
	return w, nil
}

// writeError is a failed write of w's record. The slot may hold part of
// the record: its checksum fails, the other slot still holds the newest
// state on disk.
func (s *Store) writeError(w *pending, err error) error {
	return fmt.Errorf("state of node %s: writing %s: %w", w.n.key, s.f.Name(), fserr.Bare(err))
}

// syncWrites waits until the writes are on disk (one fdatasync, shared
// with the writes of other nodes made meanwhile), then records them.
// linger: the writes are one node's save, which may linger (groupSync).
func (s *Store) syncWrites(ws []*pending, linger bool) error {
	s.sync.commit(ws, linger)
	var errs []error
	var syncErr error
	for _, w := range ws {
		switch {
		case w.werr != nil:
			s.failures.Add(1)
			errs = append(errs, s.writeError(w, w.werr))
		case w.serr != nil:
			s.failures.Add(1)
			syncErr = w.serr
		default:
			w.n.seq, w.n.last, w.n.hash = w.seq, w.st, w.hash
			s.writes.Add(1)
			s.written.Add(uint64(w.bytes))
		}
	}
	if syncErr != nil {
		errs = append(errs, fmt.Errorf("state file %q: syncing %s: %w", s.path, s.f.Name(), fserr.Bare(syncErr)))
	}
	return errors.Join(errs...)
}

var (
	bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	recPool = sync.Pool{New: func() any { return new([]byte) }}
)

// slotSize is the slot size for a record of n bytes: room to grow to
// twice its size, in whole pages.
func slotSize(n int) int {
	return (max(2*n, minSlot) + align - 1) / align * align
}

// writeManifest writes the manifest naming the region of every node
// written so far. Manifest writes are serialised and each reads the regions
// as they are when it runs, so the last manifest written is the newest.
func (s *Store) writeManifest() error {
	s.mmu.Lock()
	defer s.mmu.Unlock()
	s.mu.Lock()
	nodes := make([]*node, 0, len(s.nodes))
	for _, n := range s.nodes {
		nodes = append(nodes, n)
	}
	s.mu.Unlock()
	m := manifest{Format: Format, SlotFile: s.name, Nodes: map[string]region{}}
	for _, n := range nodes {
		n.mu.Lock() // a write of the node in progress ends first
		if n.seq > 0 && n.size > 0 {
			m.Nodes[n.key] = region{At: n.at, Size: n.size}
		}
		n.mu.Unlock()
	}
	if err := writeManifestFile(s.path, m); err != nil {
		s.failures.Add(1)
		return err
	}
	for _, n := range nodes {
		n.mu.Lock()
		if r, ok := m.Nodes[n.key]; ok && r.At == n.at && r.Size == n.size {
			n.listed = true
		}
		n.mu.Unlock()
	}
	return nil
}

// groupSync commits writes: it writes the records left to it and syncs
// the slot file once for every write committed meanwhile. A committer
// that finds no sync running runs the next one (it is the leader); the
// others wait for it.
//
// A single node's save (a /probe) leaves its record to the leader, so
// that the writes of a batch are made one after the other, just before
// the fdatasync, and a probe makes no system call of its own. If it
// finds the store busy (a sync ended less than busyWithin ago: probes are
// arriving together, as when Prometheus scrapes many /probe targets) its
// leader lingers before it writes and syncs, so that the probes arriving
// meanwhile share its sync. An fdatasync is the store's largest cost, and
// its blocked thread makes the Go runtime hand its processor to another
// (the linger halves the syncs per probe: docs/performance.md).
// A lone probe, or a save of every node at once (/metrics, shutdown,
// which writes its records itself, one after the other), never lingers.
type groupSync struct {
	f     *os.File
	syncs atomic.Uint64

	mu       sync.Mutex
	cond     sync.Cond
	queue    []*pending // committed, not yet taken by a leader
	running  bool       // a leader is lingering, writing or syncing
	lastSync time.Time  // when the latest sync ended

	lingerFor, busyWithin time.Duration // defaultLinger, defaultBusy; tests change them
	endLinger             chan struct{} // tests: ends a linger early (nil: never)
}

const (
	defaultLinger = 2 * time.Millisecond
	defaultBusy   = 10 * time.Millisecond
)

// commit returns once every pending of ws is done: its record written (by
// its saver, or here when it left it), then synced, or its werr or serr
// set. linger: ws is a single node's save, whose leader may linger.
func (g *groupSync) commit(ws []*pending, linger bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.queue = append(g.queue, ws...)
	for !ws[len(ws)-1].done { // ws joined the queue together: one batch
		if g.running {
			g.cond.Wait()
			continue
		}
		g.running = true
		busy := linger && !g.lastSync.IsZero() && time.Since(g.lastSync) < g.busyWithin
		g.mu.Unlock()
		if busy {
			t := time.NewTimer(g.lingerFor)
			select {
			case <-t.C:
			case <-g.endLinger:
				t.Stop()
			}
		}
		g.mu.Lock()
		batch := g.queue
		g.queue = nil
		g.mu.Unlock()
		g.flush(batch)
		g.mu.Lock()
		for _, w := range batch {
			w.done = true
		}
		g.running = false
		g.lastSync = time.Now()
		g.cond.Broadcast()
	}
}

// flush writes the batch's records left to it, then syncs the file once.
func (g *groupSync) flush(batch []*pending) {
	written := false
	for _, w := range batch {
		if w.rec != nil {
			if _, err := g.f.WriteAt(*w.rec, w.off); err != nil {
				w.werr = err
				continue
			}
		}
		written = true
	}
	if !written {
		return
	}
	err := datasync(g.f)
	g.syncs.Add(1)
	if err != nil {
		for _, w := range batch {
			if w.werr == nil {
				w.serr = err
			}
		}
	}
}

// encodePayload writes a node's record payload: its key and state, JSON
// (the state's own encoder: the bytes of encoding/json, at a fraction of
// its cost; the payload is read back with encoding/json).
func encodePayload(buf *bytes.Buffer, key string, st *tracker.State) error {
	k, err := json.Marshal(key)
	if err != nil {
		return err
	}
	b := buf.AvailableBuffer()
	b = append(b, `{"key":`...)
	b = append(b, k...)
	b = append(b, `,"state":`...)
	if b, err = st.AppendJSON(b); err != nil {
		return err
	}
	b = append(b, "}\n"...)
	buf.Write(b)
	return nil
}

// payload is a node record's content.
type payload struct {
	Key   string         `json:"key"`
	State *tracker.State `json:"state"`
}
