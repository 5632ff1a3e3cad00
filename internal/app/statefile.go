package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/indexima-exporter/indexima_exporter/collector"
)

// stateFile keeps the collector's event cursors and counters in a file
// (--events.state-file), so a restarted exporter resumes where it stopped
// instead of taking a new baseline: nothing lost, nothing counted twice.
// The file is written after scrapes (coalesced, by one goroutine) and at
// shutdown, always to a temporary file renamed over the old one, so a crash
// leaves either the old or the new state, never half of one.
type stateFile struct {
	path   string
	exp    *collector.Exporter
	logger log.Logger
	kick   chan struct{}
	stop   chan struct{}
	done   chan struct{}
}

func newStateFile(path string, exp *collector.Exporter, logger log.Logger) *stateFile {
	return &stateFile{path: path, exp: exp, logger: logger,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// restore reads the file if there is one (call it after the first
// SetClusters) and writes it back at once, so an unwritable path is reported
// at start rather than at the first save. A file that does not parse is set
// aside (it would otherwise be overwritten) and the exporter starts fresh.
func (s *stateFile) restore() error {
	// Writable? Asked first, so a bad path fails before anything is logged.
	probe, err := os.CreateTemp(filepath.Dir(s.path), "."+filepath.Base(s.path)+".probe-*")
	if err != nil {
		return fmt.Errorf("--events.state-file %q: cannot write there: %v", s.path, openErr(err))
	}
	probe.Close()
	os.Remove(probe.Name())

	f, err := os.Open(s.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		level.Info(s.logger).Log("msg", "no state file yet; nodes start from their first contact", "file", s.path)
	case err != nil:
		return fmt.Errorf("--events.state-file %q: %v", s.path, openErr(err))
	default:
		n, rerr := s.exp.ReadState(f)
		f.Close()
		if rerr != nil {
			aside := s.path + ".unreadable"
			level.Warn(s.logger).Log("msg", "state file not usable, set aside; nodes start from their first contact",
				"file", s.path, "moved_to", aside, "err", rerr)
			if err := os.Rename(s.path, aside); err != nil {
				return fmt.Errorf("--events.state-file %q: unusable (%v) and cannot be set aside: %v", s.path, rerr, openErr(err))
			}
		} else {
			level.Info(s.logger).Log("msg", "state restored", "file", s.path, "nodes", n)
		}
	}
	if err := s.save(); err != nil {
		return fmt.Errorf("--events.state-file %q: %v", s.path, err)
	}
	return nil
}

// save writes the state atomically.
func (s *stateFile) save() error {
	tmp, err := os.CreateTemp(filepath.Dir(s.path), "."+filepath.Base(s.path)+".tmp-*")
	if err != nil {
		return openErr(err)
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	if err := s.exp.WriteState(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return openErr(os.Rename(tmp.Name(), s.path))
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
