package program

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/indexima-exporter/indexima_exporter/internal/fserr"
	"github.com/indexima-exporter/indexima_exporter/poller"
	"github.com/indexima-exporter/indexima_exporter/store"
)

// stateStore keeps the collector's per-node state in a store
// (--events.state-file, package store), so a restarted exporter resumes
// where it stopped instead of taking a new baseline: nothing lost, nothing
// counted twice. A scrape writes the nodes it polled, before its answer
// goes out: a /probe one node, /metrics every node that changed. The
// shutdown writes what changed since.
type stateStore struct {
	path   string
	exp    *poller.Poller
	logger log.Logger
	st     *store.Store // nil until restore
	// written, when set, runs a save only once every counted event is in
	// the event log (eventlog.Log.WhileWritten), and reports whether it
	// ran: a saved state never holds an event the log lacks.
	written func(save func()) bool
}

func newStateStore(path string, exp *poller.Poller, logger log.Logger, written func(func()) bool) *stateStore {
	return &stateStore{path: path, exp: exp, logger: logger, written: written}
}

// guarded runs save, or leaves it to a later save while the event log
// holds lines it could not write (the log says so).
func (s *stateStore) guarded(save func()) {
	if s.written == nil {
		save()
		return
	}
	if !s.written(save) {
		level.Debug(s.logger).Log("msg", "state file not saved: the event log holds lines it could not write", "file", s.path)
	}
}

// restore opens the store (call it after the first SetClusters), gives the
// configured nodes their saved state and writes them back at once, so an
// unwritable path is reported at start rather than at the first save. The
// store is this process's alone until it ends: another process holding
// the state file stops the start, before anything is read (store.Open
// takes the lock first). A state whose content cannot be used is set
// aside (it would otherwise be overwritten) and the nodes concerned start
// fresh; a path that cannot be read or written at all stops the start.
func (s *stateStore) restore() error {
	// Writable? Asked first, so a bad path fails before anything is logged.
	probe, err := os.CreateTemp(filepath.Dir(s.path), "."+filepath.Base(s.path)+".probe-*")
	if err != nil {
		return fmt.Errorf("--events.state-file %q: cannot write there: %v", s.path, fserr.Bare(err))
	}
	probe.Close()
	os.Remove(probe.Name())

	st, o, err := store.Open(s.path)
	if err != nil {
		return fmt.Errorf("--events.state-file: %v", err)
	}
	s.st = st
	if o.Unlocked {
		level.Warn(s.logger).Log("msg", "this platform offers no file lock: nothing keeps another process off the state file; run one process per state file", "file", s.path)
	}
	if o.Unusable != nil {
		kv := []any{"msg", "state file not usable, set aside; nodes start from their first contact",
			"file", s.path, "moved_to", o.SetAside, "err", o.Unusable}
		if len(o.SetAsideSlots) > 0 {
			kv = append(kv, "slot_files_moved_to", strings.Join(o.SetAsideSlots, ","))
		}
		level.Warn(s.logger).Log(kv...)
	}
	for key, err := range o.Damaged {
		level.Warn(s.logger).Log("msg", "node state not usable, left out; the node starts from its first contact",
			"file", s.path, "node", key, "err", err, "slot_file_kept_as", strings.Join(o.SetAsideSlots, ","))
	}
	if len(o.Removed) > 0 {
		level.Info(s.logger).Log("msg", "slot files without a manifest removed", "files", strings.Join(o.Removed, ","))
	}
	restored := s.exp.Restore(o.States)
	switch {
	case o.Unusable != nil:
	case !o.Found:
		level.Info(s.logger).Log("msg", "no state file yet; nodes start from their first contact", "file", s.path)
	case o.Migrated != "":
		level.Info(s.logger).Log("msg", "state restored", "file", s.path, "nodes", restored,
			"migrated_from_format", "2", "old_file_kept_as", o.Migrated)
	default:
		level.Info(s.logger).Log("msg", "state restored", "file", s.path, "nodes", restored)
	}
	if err := s.saveAll(); err != nil {
		st.Close()
		return fmt.Errorf("--events.state-file: %v", err)
	}
	return nil
}

// saveAll writes every configured node whose state changed and drops the
// saved state of the nodes no longer configured, naming each once: at
// start (a state written under another configuration) and after a reload
// that removed nodes.
func (s *stateStore) saveAll() error {
	refs := s.exp.NodeStates()
	nodes := make([]store.Node, len(refs))
	for i, r := range refs {
		nodes[i] = store.Node{Key: r.Key, State: r.State}
	}
	dropped, err := s.st.SaveAll(nodes)
	for _, key := range dropped {
		level.Warn(s.logger).Log("msg", "saved state of a node no longer configured dropped; configured again, it starts from its first contact",
			"file", s.path, "node", key)
	}
	return err
}

// afterReload drops the saved state of the nodes a reload removed (and
// writes what changed), so that the log names them at the reload rather
// than at a later scrape. The first load, before restore, has no store yet.
func (s *stateStore) afterReload() {
	if s.st == nil {
		return
	}
	s.afterMetrics()
}

// afterMetrics saves what a /metrics scrape has just moved, before its
// answer is sent: a counter value Prometheus has seen is then always in the
// store. Saved later, a crash in between would restore counters lower than
// those scraped, which Prometheus takes for a counter reset, counting the
// restored values again in increase() (and firing event alerts).
func (s *stateStore) afterMetrics() {
	s.guarded(func() {
		if err := s.saveAll(); err != nil {
			level.Warn(s.logger).Log("msg", "cannot write the state file", "file", s.path, "err", err)
		}
	})
}

// afterProbe saves the one node a /probe polled, before its answer is sent.
func (s *stateStore) afterProbe(cluster, target string) {
	ref, ok := s.exp.NodeStateOf(cluster, target)
	if !ok {
		return
	}
	s.guarded(func() {
		if err := s.st.Save(ref.Key, ref.State); err != nil {
			level.Warn(s.logger).Log("msg", "cannot write the state file", "file", s.path, "node", ref.Key, "err", err)
		}
	})
}

// close saves what changed since the last scrape (shutdown).
func (s *stateStore) close() {
	s.guarded(func() {
		if err := s.saveAll(); err != nil {
			level.Error(s.logger).Log("msg", "cannot write the state file at shutdown", "file", s.path, "err", err)
		}
	})
	s.st.Close()
}

// collectors returns the store's own metrics: what it wrote.
func (s *stateStore) collectors() []prometheus.Collector {
	stat := func(f func(store.Stats) uint64) func() float64 {
		return func() float64 {
			if s.st == nil {
				return 0
			}
			return float64(f(s.st.Stats()))
		}
	}
	return []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "indexima_exporter_state_writes_total",
			Help: "Node states written to the state store (--events.state-file), each synced to disk before the scrape's answer."},
			stat(func(st store.Stats) uint64 { return st.Writes })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "indexima_exporter_state_written_bytes_total",
			Help: "Bytes of the node states written to the state store."},
			stat(func(st store.Stats) uint64 { return st.Bytes })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "indexima_exporter_state_syncs_total",
			Help: "fdatasyncs of the state store's slot file: writes made together (concurrent probes, the nodes of a scrape) share one."},
			stat(func(st store.Stats) uint64 { return st.Syncs })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "indexima_exporter_state_write_failures_total",
			Help: "Writes to the state store that failed (the error is logged); the state on disk is then older than what scrapes showed."},
			stat(func(st store.Stats) uint64 { return st.Failures })),
	}
}

// savingGatherer runs a save after the gathering, before the answer is
// encoded (web.ProbeHandler does the same for a probe's collector).
type savingGatherer struct {
	prometheus.TransactionalGatherer
	save func()
}

func (g savingGatherer) Gather() ([]*dto.MetricFamily, func(), error) {
	mfs, done, err := g.TransactionalGatherer.Gather()
	g.save()
	return mfs, done, err
}
