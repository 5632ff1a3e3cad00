package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// maxManifestBytes bounds what Open reads at PATH: a manifest names a few
// hundred nodes, a format-2 file holds them all (bounded per-node state);
// anything larger is not ours (a wrong path) and is refused rather than
// read into memory.
const maxManifestBytes = 64 << 20

// manifest is the document at PATH.
type manifest struct {
	Format   int               `json:"format"`
	NodesDir string            `json:"nodes_dir"` // PATH.d, relative to PATH's directory
	Nodes    map[string]string `json:"nodes"`     // key -> stem of the node's files
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
	// Unusable is why the state at the path could not be used ("" when it
	// could); it was moved to SetAside (and its node files to SetAsideDir,
	// if there were any), and every node starts from its first contact.
	Unusable    error
	SetAside    string
	SetAsideDir string
	// Damaged are the nodes whose files failed their checks, by key: their
	// files were renamed to *.unreadable, and they start from their first
	// contact.
	Damaged map[string]error
	// Removed is a node directory found without a manifest (the manifest
	// deleted to start afresh), removed.
	Removed string
}

// Open opens the store at path (--events.state-file), creating it if there
// is none: the manifest at path, the node files in path.d. A state file of
// an older format at path is migrated; a state that cannot be used is set
// aside (see Opened). An error is a path that cannot be read or written at
// all (permissions, not a regular file, a missing directory).
func Open(path string) (*Store, Opened, error) {
	s := &Store{path: path, dir: path + ".d", seed: maphash.MakeSeed(),
		nodes: map[string]*node{}, listed: map[string]string{}, stems: map[string]string{}}
	var o Opened
	data, found, err := readBounded(path, maxManifestBytes)
	if err != nil {
		return nil, o, err
	}
	o.Found = found
	if !found {
		return s, o, s.create(&o)
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
			if err = s.checkManifest(m); err == nil {
				return s, o, s.load(m, &o)
			}
		}
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
	// Not usable: set aside, with its node files, and start afresh.
	o.Unusable = err
	o.SetAside = path + ".unreadable"
	if err := os.Rename(path, o.SetAside); err != nil {
		return nil, o, fmt.Errorf("state file %q: unusable (%v) and cannot be set aside: %w", path, o.Unusable, unwrapPath(err))
	}
	if _, err := os.Stat(s.dir); err == nil {
		o.SetAsideDir = s.dir + ".unreadable"
		os.RemoveAll(o.SetAsideDir)
		if err := os.Rename(s.dir, o.SetAsideDir); err != nil {
			return nil, o, fmt.Errorf("state file %q: %q cannot be set aside: %w", path, s.dir, unwrapPath(err))
		}
	}
	return s, o, s.create(&o)
}

// create makes an empty store: the node directory and a manifest naming no
// node. Node files of an earlier store without a manifest (deleted to start
// afresh) are removed.
func (s *Store) create(o *Opened) error {
	s.cleanStaging()
	if _, err := os.Stat(s.dir); err == nil {
		if err := os.RemoveAll(s.dir); err != nil {
			return fmt.Errorf("state file %q: removing %q: %w", s.path, s.dir, unwrapPath(err))
		}
		o.Removed = s.dir
	}
	if err := os.Mkdir(s.dir, 0o700); err != nil {
		return fmt.Errorf("state file %q: %w", s.path, unwrapPath(err))
	}
	return writeManifest(s.path, s.dir, s.listed)
}

// cleanStaging removes what an interrupted migration left.
func (s *Store) cleanStaging() {
	os.RemoveAll(s.dir + ".new")
	os.RemoveAll(s.dir + ".old")
}

var stemRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$`)

func (s *Store) checkManifest(m manifest) error {
	if m.NodesDir != filepath.Base(s.dir) {
		return fmt.Errorf("the manifest names node directory %q, want %q", m.NodesDir, filepath.Base(s.dir))
	}
	seen := map[string]bool{}
	for key, stem := range m.Nodes {
		if !stemRE.MatchString(stem) || strings.HasSuffix(stem, ".unreadable") {
			return fmt.Errorf("node %q: file name %q is not one of the store's", key, stem)
		}
		if seen[stem] {
			return fmt.Errorf("file name %q listed twice", stem)
		}
		seen[stem] = true
	}
	return nil
}

// load reads every node the manifest lists. A node whose files fail their
// checks is set aside alone; files the manifest does not name (a node
// written, not yet listed, when the exporter stopped) are removed.
func (s *Store) load(m manifest, o *Opened) error {
	s.cleanStaging()
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("state file %q: %w", s.path, unwrapPath(err))
	}
	o.States = map[string]*tracker.State{}
	for key, stem := range m.Nodes {
		rec, size, err := s.loadNode(key, stem)
		if err != nil {
			if o.Damaged == nil {
				o.Damaged = map[string]error{}
			}
			o.Damaged[key] = err
			for slot := range 2 {
				p := slotPath(s.dir, stem, slot)
				if _, err := os.Stat(p); err == nil {
					os.Rename(p, p+".unreadable")
				}
			}
			continue
		}
		o.States[key] = rec.state
		n := &node{key: key, stem: stem, seq: rec.seq, size: size, hash: rec.hash}
		n.onDisk.Store(true)
		s.nodes[key], s.stems[stem], s.listed[key] = n, key, stem
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("state file %q: %w", s.path, unwrapPath(err))
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, ".unreadable") {
			continue
		}
		if stem, _, ok := cutSlot(name); ok && s.stems[stem] != "" {
			continue
		}
		os.Remove(filepath.Join(s.dir, name))
	}
	if len(o.Damaged) > 0 {
		return writeManifest(s.path, s.dir, s.listed)
	}
	return nil
}

// cutSlot splits a slot file's name into its stem and slot.
func cutSlot(name string) (string, int, bool) {
	switch {
	case strings.HasSuffix(name, ".0"):
		return name[:len(name)-2], 0, true
	case strings.HasSuffix(name, ".1"):
		return name[:len(name)-2], 1, true
	}
	return "", 0, false
}

// migrate writes the nodes of a file of format 1 or 2 as a store, then
// replaces the file by the manifest, keeping the file as PATH.migrated.
// The manifest is written last: a crash before it leaves the old file in
// place, migrated again at the next start.
func (s *Store) migrate(data []byte, old oldFile, o *Opened) error {
	s.cleanStaging()
	staging := s.dir + ".new"
	if err := os.Mkdir(staging, 0o700); err != nil {
		return fmt.Errorf("state file %q: migrating: %w", s.path, unwrapPath(err))
	}
	o.States = map[string]*tracker.State{}
	final := s.dir
	s.dir = staging // written there, renamed below
	for key, st := range old.Nodes {
		if st == nil || !st.Contacted {
			continue
		}
		n := s.nodeFor(key)
		if err := s.save(n, func() *tracker.State { return st }); err != nil {
			s.dir = final
			return fmt.Errorf("state file %q: migrating: %w", s.path, err)
		}
		s.listed[key] = n.stem
		o.States[key] = st
	}
	s.dir = final
	for _, n := range s.nodes {
		n.last = nil // what the exporter restores is a repaired copy: written again at the first save
	}
	syncDir(staging)
	if _, err := os.Stat(final); err == nil {
		if err := os.Rename(final, final+".old"); err != nil {
			return fmt.Errorf("state file %q: migrating: %w", s.path, unwrapPath(err))
		}
	}
	if err := os.Rename(staging, final); err != nil {
		return fmt.Errorf("state file %q: migrating: %w", s.path, unwrapPath(err))
	}
	syncDir(filepath.Dir(s.path))
	o.Migrated = s.path + ".migrated"
	if err := writeAtomic(o.Migrated, data); err != nil {
		return err
	}
	if err := writeManifest(s.path, s.dir, s.listed); err != nil {
		return err
	}
	os.RemoveAll(final + ".old")
	return nil
}

// newStem names a new node's files: the key made file-name safe (for the
// one who lists the directory), then a hash of it, unique in the store.
func (s *Store) newStem(key string) string {
	var b strings.Builder
	for _, r := range key {
		if b.Len() >= 60 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.' && b.Len() > 0:
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	sum := sha256.Sum256([]byte(key))
	base := b.String() + "-" + hex.EncodeToString(sum[:4])
	stem := base
	for i := 2; s.stems[stem] != ""; i++ {
		stem = fmt.Sprintf("%s-%d", base, i)
	}
	return stem
}

// writeManifest replaces the manifest atomically.
func writeManifest(path, dir string, nodes map[string]string) error {
	data, err := json.MarshalIndent(manifest{Format: Format, NodesDir: filepath.Base(dir), Nodes: nodes}, "", "  ")
	if err != nil {
		return fmt.Errorf("state file %q: encoding: %w", path, err)
	}
	return writeAtomic(path, append(data, '\n'))
}

// errNotRegular is a path that is not a regular file.
var errNotRegular = errors.New("not a regular file")
