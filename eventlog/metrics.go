package eventlog

import "github.com/prometheus/client_golang/prometheus"

// Collectors returns the log's own metrics: what it wrote, what failed and
// what waits.
func (l *Log) Collectors() []prometheus.Collector {
	stat := func(f func(Stats) float64) func() float64 {
		return func() float64 { return f(l.Stats()) }
	}
	return []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "indexima_exporter_event_log_events_total",
			Help: "Lines written to the event log (--events.log), one per counted event."},
			stat(func(s Stats) float64 { return float64(s.Written) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "indexima_exporter_event_log_write_failures_total",
			Help: "Writes to the event log that failed (the error is logged); their lines are kept and written at the next attempt."},
			stat(func(s Stats) float64 { return float64(s.Failures) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "indexima_exporter_event_log_pending_events",
			Help: "Lines of counted events waiting for the event log to be writable; the state file is not saved while there are any."},
			stat(func(s Stats) float64 { return float64(s.Pending) })),
	}
}
