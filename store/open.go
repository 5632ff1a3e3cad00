package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/indexima-exporter/indexima_exporter/internal/fserr"
	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// maxManifestBytes bounds what Open reads at PATH: a manifest names a few
// hundred nodes, a format-2 file holds them all (bounded per-node state);
// anything larger is not ours (a wrong path) and is refused rather than
// read into memory.
const maxManifestBytes = 64 << 20

// manifest is the document at PATH. A version that changes it changes
// Format: a version that meets a format above its own refuses the store
// (NewerError). (Its fields are not checked otherwise: an earlier main
// wrote a manifest of format 3 with other fields, set aside as unusable.)
type manifest struct {
	Format   int               `json:"format"`
	SlotFile string            `json:"slot_file"` // PATH.slots.GEN, in PATH's directory
	Nodes    map[string]region `json:"nodes"`     // by node key
}

// region is a node's place in the slot file: two slots of Size bytes from
// At.
type region struct {
	At   int64 `json:"at"`
	Size int   `json:"size"`
}

// oldFile is a state file of formats 1 and 2: every node in one document.
type oldFile struct {
	Version int                       `json:"version"`
	Nodes   map[string]*tracker.State `json:"nodes"`
}

const oldestVersion, newestOldVersion = 1, 2

// Opened is what Open found at the path.
type Opened struct {
	// States are the saved states by node key, checked (not yet repaired:
	// tracker.State.Repair is the engine's, with the engine's limits).
	States map[string]*tracker.State
	// Found tells there was a state (a manifest or an older file).
	Found bool
	// Migrated is where a state file of an older format was kept once its
	// content was written to the store ("": no migration).
	Migrated string
	// Unusable is why the state at the path could not be used (nil when it
	// could); it was moved to SetAside, and every node starts from its
	// first contact.
	Unusable error
	SetAside string
	// Damaged are the nodes whose slots both failed their checks, by key:
	// they start from their first contact, the other nodes resume.
	Damaged map[string]error
	// SetAsideSlots are slot files kept as *.unreadable: the one of an
	// unusable manifest, or the one that held damaged nodes.
	SetAsideSlots []string
	// Removed are slot files no manifest named (the manifest deleted to
	// start afresh), removed.
	Removed []string
	// Unlocked tells this platform has no file lock: nothing keeps another
	// process off the state file (lock_none.go).
	Unlocked bool
}

// Open opens the store at path (--events.state-file), creating it if there
// is none. It first takes the state file's lock (PATH.lock, LockSuffix),
// which the store holds until Close or the end of the process: another
// process holding it is an *InUseError, and nothing has been read or
// written then. A state file of an older format at path is migrated; a
// state that cannot be used is set aside (see Opened). The slot file is
// always written anew, compactly. Any other error is a path that cannot be
// read or written at all (permissions, not a regular file, a missing
// directory).
func Open(path string) (*Store, Opened, error) {
	l, err := lockPath(path)
	if err != nil {
		return nil, Opened{}, err
	}
	s, o, err := openLocked(path)
	o.Unlocked = !lockSupported
	if err != nil {
		if s != nil && s.f != nil {
			s.f.Close()
		}
		// The open's error is the one to report; closing the lock file
		// releases the lock whatever Close says.
		_ = l.release()
		return nil, o, err
	}
	s.lock = l
	return s, o, nil
}

// openLocked is Open once the lock is held.
func openLocked(path string) (*Store, Opened, error) {
	s := &Store{path: path, seed: maphash.MakeSeed(), nodes: map[string]*node{}}
	s.sync.cond.L = &s.sync.mu
	s.sync.lingerFor, s.sync.busyWithin = defaultLinger, defaultBusy
	var o Opened
	data, found, err := readBounded(path, maxManifestBytes)
	if err != nil {
		return nil, o, err
	}
	o.Found = found
	if !found {
		o.Removed = s.strays("")
		for _, p := range o.Removed {
			os.Remove(p)
		}
		return s, o, s.rewrite(1, nil)
	}
	var head struct {
		Format  int `json:"format"`
		Version int `json:"version"`
	}
	err = json.Unmarshal(data, &head)
	switch {
	case err != nil:
		err = fmt.Errorf("not a state file: %w", err)
	case head.Format == Format:
		var m manifest
		if err = json.Unmarshal(data, &m); err == nil {
			var gen int
			if gen, err = s.checkManifest(m); err == nil {
				return s, o, s.load(m, gen, &o)
			}
		}
	case head.Format > Format:
		return nil, o, &NewerError{Path: path, What: fmt.Sprintf("store format %d; this version reads %d", head.Format, Format)}
	case head.Format != 0:
		err = fmt.Errorf("store format %d, want %d (written by another version)", head.Format, Format)
	case head.Version < oldestVersion || head.Version > newestOldVersion:
		err = fmt.Errorf("format version %d, want %d to %d", head.Version, oldestVersion, newestOldVersion)
	default:
		var old oldFile
		if err = json.Unmarshal(data, &old); err == nil {
			return s, o, s.migrate(data, old, &o)
		}
		err = fmt.Errorf("reading the state file: %w", err)
	}
	// Not usable: set aside, with its slot files, and start afresh.
	o.Unusable = err
	o.SetAside = path + ".unreadable"
	if err := os.Rename(path, o.SetAside); err != nil {
		return nil, o, fmt.Errorf("state file %q: unusable (%v) and cannot be set aside: %w", path, o.Unusable, fserr.Bare(err))
	}
	for _, p := range s.strays("") {
		if os.Rename(p, p+".unreadable") == nil {
			o.SetAsideSlots = append(o.SetAsideSlots, p+".unreadable")
		}
	}
	return s, o, s.rewrite(1, nil)
}

func slotSuffix(gen int) string { return "slots." + strconv.Itoa(gen) }

// strays returns the slot files beside path other than keep (a base name),
// *.unreadable excepted.
func (s *Store) strays(keep string) []string {
	dir, base := filepath.Dir(s.path), filepath.Base(s.path)+".slots."
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		gen, ok := strings.CutPrefix(name, base)
		if !ok || name == keep {
			continue
		}
		if _, err := strconv.Atoi(gen); err == nil {
			out = append(out, filepath.Join(dir, name))
		}
	}
	return out
}

func (s *Store) checkManifest(m manifest) (int, error) {
	base := filepath.Base(s.path) + ".slots."
	g, ok := strings.CutPrefix(m.SlotFile, base)
	gen, err := strconv.Atoi(g)
	if !ok || err != nil || gen < 1 {
		return 0, fmt.Errorf("the manifest names slot file %q, want %s<generation>", m.SlotFile, base)
	}
	var rs []region
	for key, r := range m.Nodes {
		if r.At < 0 || r.At%align != 0 || r.Size < align || r.Size%align != 0 || r.Size > maxSlotBytes {
			return 0, fmt.Errorf("node %q: region %+v is not one of the store's", key, r)
		}
		rs = append(rs, r)
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].At < rs[j].At })
	for i := 1; i < len(rs); i++ {
		if rs[i-1].At+2*int64(rs[i-1].Size) > rs[i].At {
			return 0, errors.New("the manifest's regions overlap")
		}
	}
	return gen, nil
}

// loaded is a node's newest record read back.
type loaded struct {
	rec  []byte
	seq  uint64
	hash uint64
}

// load reads every node the manifest lists, then writes them into a new
// slot file. A node whose slots both fail their checks is left out (the
// old slot file is kept as *.unreadable).
func (s *Store) load(m manifest, gen int, o *Opened) error {
	old := filepath.Join(filepath.Dir(s.path), m.SlotFile)
	f, err := os.Open(old)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("state file %q: %w", old, fserr.Bare(err))
	}
	if f != nil {
		defer f.Close()
		if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
			return fmt.Errorf("state file %q: %w", old, errNotRegular)
		}
	}
	o.States = map[string]*tracker.State{}
	records := map[string]loaded{}
	for key, r := range m.Nodes {
		var st *tracker.State
		var l loaded
		err := errors.New("the slot file is missing")
		if f != nil {
			buf := make([]byte, 2*r.Size)
			n, rerr := f.ReadAt(buf, r.At)
			if rerr != nil && rerr != io.EOF {
				return fmt.Errorf("state file %q: %w", old, fserr.Bare(rerr))
			}
			var body []byte
			l.rec, l.seq, body, st, err = newestRecord(buf[:n], r.Size, key)
			l.hash = maphash.Bytes(s.seed, body)
		}
		if newer := (*newerState)(nil); errors.As(err, &newer) {
			return &NewerError{Path: s.path, Node: key, What: newer.what} // before anything is written
		}
		if err != nil {
			if o.Damaged == nil {
				o.Damaged = map[string]error{}
			}
			o.Damaged[key] = err
			continue
		}
		records[key] = l
		o.States[key] = st
	}
	if err := s.rewrite(gen+1, records); err != nil {
		return err
	}
	if err := writeManifestFile(s.path, s.manifest()); err != nil {
		return err
	}
	if f != nil && len(o.Damaged) > 0 {
		if os.Rename(old, old+".unreadable") == nil {
			o.SetAsideSlots = append(o.SetAsideSlots, old+".unreadable")
		}
	}
	s.removeStrays()
	return nil
}

// migrate writes the nodes of a file of formats 1 and 2 into a new store,
// keeps the file as PATH.migrated, then replaces it by the manifest. The
// manifest is written last: a crash before it leaves the old file in
// place, migrated again at the next start.
func (s *Store) migrate(data []byte, old oldFile, o *Opened) error {
	o.States = map[string]*tracker.State{}
	records := map[string]loaded{}
	for key, st := range old.Nodes {
		if st == nil || !st.Contacted {
			continue
		}
		var b bytes.Buffer
		if err := encodePayload(&b, key, st); err != nil {
			return fmt.Errorf("state file %q: migrating node %s: %w", s.path, key, err)
		}
		body := b.Bytes()
		records[key] = loaded{rec: appendRecord(nil, 1, body), seq: 1, hash: maphash.Bytes(s.seed, body)}
		o.States[key] = st
	}
	if err := s.rewrite(1, records); err != nil {
		return err
	}
	o.Migrated = s.path + ".migrated"
	if err := writeAtomic(o.Migrated, data); err != nil {
		return err
	}
	if err := writeManifestFile(s.path, s.manifest()); err != nil {
		return err
	}
	s.removeStrays()
	return nil
}

// rewrite writes records into a new slot file of generation gen, each in a
// region of its own, syncs it and makes it the store's. The caller then
// writes the manifest naming it (the commit), then removes the others.
func (s *Store) rewrite(gen int, records map[string]loaded) error {
	s.gen, s.name = gen, filepath.Base(s.path)+"."+slotSuffix(gen)
	path := filepath.Join(filepath.Dir(s.path), s.name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("state file %q: %w", path, fserr.Bare(err))
	}
	keys := make([]string, 0, len(records))
	for k := range records {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var at int64
	for _, k := range keys {
		l := records[k]
		size := slotSize(len(l.rec))
		if _, err := f.WriteAt(l.rec, at+int64(l.seq%2)*int64(size)); err != nil {
			f.Close()
			return fmt.Errorf("state file %q: writing: %w", path, fserr.Bare(err))
		}
		s.nodes[k] = &node{key: k, at: at, size: size, seq: l.seq, listed: true, hash: l.hash}
		at += 2 * int64(size)
	}
	s.end = at
	// The function's err, not one declared in the if: a failed truncation
	// or sync must reach the check below.
	if err = f.Truncate(at); err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("state file %q: %w", path, fserr.Bare(err))
	}
	syncDir(filepath.Dir(path))
	s.f, s.sync.f = f, f
	if records == nil {
		return writeManifestFile(s.path, s.manifest())
	}
	return nil
}

// manifest is the manifest of the nodes as Open laid them out.
func (s *Store) manifest() manifest {
	m := manifest{Format: Format, SlotFile: s.name, Nodes: map[string]region{}}
	for k, n := range s.nodes {
		m.Nodes[k] = region{At: n.at, Size: n.size}
	}
	return m
}

// removeStrays removes the slot files the manifest no longer names.
func (s *Store) removeStrays() {
	for _, p := range s.strays(s.name) {
		os.Remove(p)
	}
}

// writeManifestFile replaces the manifest atomically.
func writeManifestFile(path string, m manifest) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("state file %q: encoding: %w", path, err)
	}
	return writeAtomic(path, append(data, '\n'))
}

// errNotRegular is a path that is not a regular file.
var errNotRegular = errors.New("not a regular file")
