package program

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/indexima-exporter/indexima_exporter/config"
	"github.com/indexima-exporter/indexima_exporter/poller"
)

// reloader loads a configuration and applies it, all or nothing: the new
// file is parsed and validated in full and its clients are built before
// anything is swapped, so a bad file leaves the running one untouched.
type reloader struct {
	mu      sync.Mutex // one reload at a time (SIGHUP and /-/reload may race)
	source  func() (*config.Config, error)
	build   func(*config.Config) ([]poller.Cluster, error)
	apply   func([]poller.Cluster)
	logger  log.Logger
	current atomic.Pointer[config.Config]

	success   prometheus.Gauge
	timestamp prometheus.Gauge
}

func newReloader(reg prometheus.Registerer, logger log.Logger,
	source func() (*config.Config, error),
	build func(*config.Config) ([]poller.Cluster, error),
	apply func([]poller.Cluster)) *reloader {
	r := &reloader{source: source, build: build, apply: apply, logger: logger,
		success: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "indexima_exporter_config_last_reload_successful",
			Help: "Whether the last configuration load or reload succeeded (1) or was refused (0).",
		}),
		timestamp: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "indexima_exporter_config_last_reload_success_timestamp_seconds",
			Help: "Time of the last successful configuration load, in Unix seconds.",
		}),
	}
	reg.MustRegister(r.success, r.timestamp)
	return r
}

// load applies the configuration from the source, or returns why not.
func (r *reloader) load() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	cfg, err := r.source()
	if err == nil {
		var clusters []poller.Cluster
		if clusters, err = r.build(cfg); err == nil {
			r.apply(clusters)
			r.current.Store(cfg)
			r.success.Set(1)
			r.timestamp.Set(float64(time.Now().UnixNano()) / 1e9)
			level.Debug(r.logger).Log("msg", "configuration in force", "config", cfg.String())
			return nil
		}
	}
	r.success.Set(0)
	return err
}

// Reload is load for a running exporter: it logs the outcome in one line.
func (r *reloader) Reload() error {
	if err := r.load(); err != nil {
		level.Error(r.logger).Log("msg", "configuration refused, the previous one stays in force", "err", err)
		return err
	}
	cfg := r.current.Load()
	level.Info(r.logger).Log("msg", "configuration reloaded", "clusters", len(cfg.Clusters), "nodes", cfg.NodeCount())
	return nil
}

// Config is the configuration in force, nil before the first load.
func (r *reloader) Config() *config.Config { return r.current.Load() }
