package app

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/indexima-exporter/indexima_exporter/collector"
	"github.com/indexima-exporter/indexima_exporter/internal/statefile"
)

// stateFile keeps the collector's event cursors and counters in a file
// (--events.state-file), so a restarted exporter resumes where it stopped
// instead of taking a new baseline: nothing lost, nothing counted twice.
// The file is written by every scrape before its answer goes out, and at
// shutdown, with internal/statefile: a temporary file renamed over the old
// one, so a crash leaves either the old or the new state, never half of one.
type stateFile struct {
	path     string
	exp      *collector.Exporter
	clusters func() []collector.Cluster // the configuration in force
	logger   log.Logger
	mu       sync.Mutex // one save at a time, so the last file written is the newest state
}

func newStateFile(path string, exp *collector.Exporter, clusters func() []collector.Cluster, logger log.Logger) *stateFile {
	return &stateFile{path: path, exp: exp, clusters: clusters, logger: logger}
}

// restore reads the file if there is one (call it after the first
// SetClusters) and writes it back at once, so an unwritable path is reported
// at start rather than at the first save. A file whose content cannot be
// used is set aside (it would otherwise be overwritten) and the exporter
// starts fresh; a file that cannot be read at all stops the start.
func (s *stateFile) restore() error {
	// Writable? Asked first, so a bad path fails before anything is logged.
	probe, err := os.CreateTemp(filepath.Dir(s.path), "."+filepath.Base(s.path)+".probe-*")
	if err != nil {
		return fmt.Errorf("--events.state-file %q: cannot write there: %v", s.path, openErr(err))
	}
	probe.Close()
	os.Remove(probe.Name())

	var restored int
	var content error // the file was read, its content is not usable
	found, err := statefile.ReadWith(s.path, func(r io.Reader) error {
		restored, content = s.read(r)
		return content
	})
	switch {
	case content != nil:
		aside := s.path + ".unreadable"
		level.Warn(s.logger).Log("msg", "state file not usable, set aside; nodes start from their first contact",
			"file", s.path, "moved_to", aside, "err", content)
		if err := os.Rename(s.path, aside); err != nil {
			return fmt.Errorf("--events.state-file %q: unusable (%v) and cannot be set aside: %v", s.path, content, openErr(err))
		}
	case err != nil:
		return fmt.Errorf("--events.state-file: %v", err)
	case !found:
		level.Info(s.logger).Log("msg", "no state file yet; nodes start from their first contact", "file", s.path)
	default:
		level.Info(s.logger).Log("msg", "state restored", "file", s.path, "nodes", restored)
	}
	if err := s.save(); err != nil {
		return fmt.Errorf("--events.state-file: %v", err)
	}
	return nil
}

// read restores the collector's state. The state is first tried on a
// scratch exporter with the same nodes: a state the collector cannot take,
// even one that makes it panic (and leave its locks held), is an error that
// sets the file aside, never a crash or a stuck exporter.
func (s *stateFile) read(r io.Reader) (int, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return 0, err
	}
	if err := s.trial(data); err != nil {
		return 0, err
	}
	return s.exp.ReadState(bytes.NewReader(data))
}

func (s *stateFile) trial(data []byte) (err error) {
	scratch, err := collector.New(collector.Options{})
	if err != nil {
		return err
	}
	scratch.SetClusters(s.clusters())
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the collector cannot restore this state: %v", p)
		}
	}()
	_, err = scratch.ReadState(bytes.NewReader(data))
	return err
}

// save writes the state atomically (temporary file, fsync, rename).
func (s *stateFile) save() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return statefile.WriteWith(s.path, s.exp.WriteState)
}

// saveAfterCollect saves the state a scrape has just moved, before its
// answer is sent: a counter value Prometheus has seen is then always in the
// file. Saved later, a crash in between would restore counters lower than
// those scraped, which Prometheus takes for a counter reset, counting the
// restored values again in increase() (and firing event alerts).
func (s *stateFile) saveAfterCollect() {
	if err := s.save(); err != nil {
		level.Warn(s.logger).Log("msg", "cannot write the state file", "file", s.path, "err", err)
	}
}

// close saves the state one last time (shutdown).
func (s *stateFile) close() {
	if err := s.save(); err != nil {
		level.Error(s.logger).Log("msg", "cannot write the state file at shutdown", "file", s.path, "err", err)
	}
}

// savingCollector runs a collector, then a save, within the collection: the
// registry sends the answer only once every collector has returned.
type savingCollector struct {
	prometheus.Collector
	save func()
}

func (c savingCollector) Collect(ch chan<- prometheus.Metric) {
	c.Collector.Collect(ch)
	c.save()
}

func openErr(err error) error {
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
