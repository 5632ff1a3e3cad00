package app

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/indexima-exporter/indexima_exporter/collector"
	"github.com/indexima-exporter/indexima_exporter/internal/statefile"
)

// stateFile keeps the collector's event cursors and counters in a file
// (--events.state-file), so a restarted exporter resumes where it stopped
// instead of taking a new baseline: nothing lost, nothing counted twice.
// The file is written after scrapes (coalesced, by one goroutine) and at
// shutdown with internal/statefile: a temporary file renamed over the old
// one, so a crash leaves either the old or the new state, never half of one.
type stateFile struct {
	path     string
	exp      *collector.Exporter
	clusters func() []collector.Cluster // the configuration in force
	logger   log.Logger
	kick     chan struct{}
	stop     chan struct{}
	done     chan struct{}
}

func newStateFile(path string, exp *collector.Exporter, clusters func() []collector.Cluster, logger log.Logger) *stateFile {
	return &stateFile{path: path, exp: exp, clusters: clusters, logger: logger,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
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
	return statefile.WriteWith(s.path, s.exp.WriteState)
}

// run saves after each kick until close; close saves one last time.
func (s *stateFile) run() {
	defer close(s.done)
	for {
		select {
		case <-s.kick:
			if err := s.save(); err != nil {
				level.Warn(s.logger).Log("msg", "cannot write the state file", "file", s.path, "err", err)
			}
		case <-s.stop:
			if err := s.save(); err != nil {
				level.Error(s.logger).Log("msg", "cannot write the state file at shutdown", "file", s.path, "err", err)
			}
			return
		}
	}
}

// saveSoon asks for a save without waiting; kicks during a save coalesce.
func (s *stateFile) saveSoon() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *stateFile) close() {
	close(s.stop)
	<-s.done
}

// savingCollector is the exporter, asking for a state save after each
// collection (the scrape has moved cursors and counters).
type savingCollector struct {
	*collector.Exporter
	state *stateFile
}

func (c savingCollector) Collect(ch chan<- prometheus.Metric) {
	c.Exporter.Collect(ch)
	c.state.saveSoon()
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
