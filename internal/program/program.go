package program

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/version"

	"github.com/indexima-exporter/indexima_exporter/collector"
	"github.com/indexima-exporter/indexima_exporter/config"
	"github.com/indexima-exporter/indexima_exporter/eventlog"
	"github.com/indexima-exporter/indexima_exporter/internal/demo"
	"github.com/indexima-exporter/indexima_exporter/internal/discovery"
	"github.com/indexima-exporter/indexima_exporter/internal/eventsapi"
	"github.com/indexima-exporter/indexima_exporter/internal/statuspage"
	"github.com/indexima-exporter/indexima_exporter/internal/web"
	"github.com/indexima-exporter/indexima_exporter/poller"
)

// program is the running exporter, wired: registries, collector,
// configuration, state file, demo cluster and HTTP handler.
type program struct {
	o        *options
	logger   log.Logger
	stdout   io.Writer // the standard output: --events.log=- writes there
	reg      *prometheus.Registry
	reloader *reloader
	state    *stateStore   // nil without --events.state-file
	events   *eventlog.Log // nil without --events.log
	polls    *poller.Poller
	demo     *demo.Demo // nil without --demo
	handler  http.Handler
	// nodes gathers the nodes' metrics within a scrape's deadline (nothing
	// with --scrape.probe-only).
	nodes func(context.Context) prometheus.TransactionalGatherer
}

// newProgram builds everything and loads the configuration; an error is a
// start the user must fix (one line).
func newProgram(o *options, logger log.Logger, stdout io.Writer) (p *program, err error) {
	p = &program{o: o, logger: logger, reg: prometheus.NewRegistry(), stdout: stdout}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	p.reg.MustRegister(
		versioncollector.NewCollector(Name), // indexima_exporter_build_info
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	if o.externalURL != "" {
		p.reg.MustRegister(externalURLInfo(o.externalURL))
	}
	var events poller.EventWriter
	var written func(func()) bool
	if o.eventLog != "" {
		if p.events, err = p.openEventLog(log.With(logger, "component", "eventlog")); err != nil {
			return p, err
		}
		events, written = p.events, p.events.WhileWritten
		p.reg.MustRegister(p.events.Collectors()...)
	}
	polls := poller.New(poller.Options{
		Logger:         log.With(logger, "component", "poller"),
		Concurrency:    o.concurrency,
		MaxLabelValues: o.maxLabelValues,
		LateWindow:     o.lateWindow,
		LookBack:       o.lookBack,
		LookBackCalls:  o.lookBackCalls,
		Events:         events,
	})
	p.polls = polls // before any poll: the event log's names read it
	exporter, err := collector.New(polls, collector.Options{
		Logger:  log.With(logger, "component", "collector"),
		Enabled: o.collectors(),
	})
	if err != nil {
		return p, err
	}
	apply := polls.SetClusters
	afterMetrics := func() {}
	var afterProbe func(cluster, target string)
	var state *stateStore
	if o.stateFile != "" {
		state = newStateStore(o.stateFile, polls, log.With(logger, "component", "state"), written)
		afterMetrics, afterProbe = state.afterMetrics, state.afterProbe
		apply = func(clusters []poller.Cluster) {
			polls.SetClusters(clusters)
			state.afterReload()
		}
		p.reg.MustRegister(state.collectors()...)
	}
	// What /metrics polls, within a scrape's deadline. With
	// --scrape.probe-only, Prometheus shards the nodes across replicas
	// through /probe; a /metrics that polled every node would have each
	// replica poll them all again at every scrape.
	nodes := func(ctx context.Context) prometheus.TransactionalGatherer {
		if o.probeOnly {
			return prometheus.ToTransactionalGatherer(prometheus.Gatherers(nil))
		}
		return savingGatherer{exporter.ScrapeGatherer(ctx), afterMetrics}
	}
	p.nodes = nodes
	// The API call metrics live in a registry gathered after the main one
	// (web.InOrder gathers in order), so a scrape shows the calls it made
	// itself; in the same registry they would be read while the polls run.
	apiReg := prometheus.NewRegistry()
	builder := clientBuilder{observer: collector.NewAPIObserver(apiReg), logger: log.With(logger, "component", "apiclient"),
		concurrency: o.concurrency, logCalls: o.logLevel == "debug"}

	source := func() (*config.Config, error) { return config.Load(o.configFile) }
	build := builder.fileBuilder(o.configFile)
	if o.demo {
		if p.demo, err = demo.Start(logger); err != nil {
			return p, err
		}
		demoCfg := p.demo.Config()
		source = func() (*config.Config, error) { return demoCfg, nil }
		build = builder.build
	}
	p.reloader = newReloader(p.reg, log.With(logger, "component", "config"), source, build, apply)
	if err := p.reloader.load(); err != nil {
		return p, err
	}
	if state != nil {
		if err := state.restore(); err != nil {
			return p, err
		}
		p.state = state // from now on, close saves it
	}
	p.handler, err = web.NewHandler(web.Options{
		MetricsPath:   o.telemetryPath,
		ExternalURL:   o.externalURL,
		TimeoutOffset: o.timeoutOffset,
		Registerer:    p.reg,
		// The API call metrics after the nodes': a scrape shows the calls
		// it made itself.
		Gather: func(ctx context.Context) prometheus.TransactionalGatherer {
			return web.InOrder{prometheus.ToTransactionalGatherer(p.reg), nodes(ctx), prometheus.ToTransactionalGatherer(apiReg)}
		},
		Text: func(ctx context.Context, format expfmt.Format) (web.TextAnswer, bool) {
			if o.probeOnly {
				return web.TextAnswer{}, false
			}
			// In the order of Gather: the exporter's own metrics, the
			// nodes, the state saved, then the API calls.
			before, errBefore := p.reg.Gather()
			ts, ok := exporter.ScrapeText(ctx, format)
			if !ok {
				return web.TextAnswer{}, false
			}
			afterMetrics()
			after, errAfter := apiReg.Gather()
			return web.TextAnswer{Nodes: ts, Others: append(before, after...), Err: errors.Join(errBefore, errAfter)}, true
		},
		Probe:  web.ProbeHandler(exporter, afterProbe, o.timeoutOffset, logger),
		Status: statuspage.Handler(polls, p.reloader, o.telemetryPath, o.probeOnly, logger),
		Events: eventsapi.Handler(polls),
		SD:     discovery.Handler(p.reloader, o.externalURL),
		Config: p.reloader,
		Logger: logger,
	})
	return p, err
}

// externalURLInfo is indexima_exporter_web_external_url_info: the alerts'
// status_url starts with its url label when the series of the alert's job
// and instance carry it (mixin/alerts.libsonnet), else with
// http://<instance>, which a browser may not reach (a container's name).
func externalURLInfo(u string) prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "indexima_exporter_web_external_url_info",
		Help:        "Always 1: the URL under which the exporter is reached from a browser (--web.external-url), where the alerts' status_url points.",
		ConstLabels: prometheus.Labels{"url": u},
	})
	g.Set(1)
	return g
}

// started logs the start and, in demo mode, starts the scenario.
func (p *program) started() {
	level.Info(p.logger).Log("msg", "starting "+Name, "version", version.Info(), "build_context", version.BuildContext())
	if p.demo != nil {
		// First contact now, so the demo's opening events are counted.
		ctx, cancel := context.WithTimeout(context.Background(), poller.DefaultScrapeBudget)
		_, done, err := p.nodes(ctx).Gather()
		done()
		cancel()
		if err != nil {
			level.Warn(p.logger).Log("msg", "demo: first scrape", "err", err)
		}
		p.demo.Play()
		return
	}
	cfg := p.reloader.Config()
	level.Info(p.logger).Log("msg", "configuration loaded", "file", p.o.configFile,
		"clusters", len(cfg.Clusters), "nodes", cfg.NodeCount())
}

// close saves the state one last time (once the event log has every
// counted event), closes the event log and stops the demo cluster; call it
// after the HTTP server stopped.
func (p *program) close() {
	if p.state != nil {
		p.state.close()
	}
	if p.events != nil {
		if err := p.events.Close(); err != nil {
			level.Error(p.logger).Log("msg", "closing the event log", "err", err)
		}
	}
	if p.demo != nil {
		p.demo.Close()
	}
}
