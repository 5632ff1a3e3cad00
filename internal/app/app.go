// Package app is the indexima_exporter program around the collector: command
// line, logging, configuration loading and reload, HTTP endpoints, demo
// mode. main only calls Run.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/indexima-exporter/indexima_exporter/collector"
	"github.com/indexima-exporter/indexima_exporter/config"
	"github.com/indexima-exporter/indexima_exporter/internal/demo"
)

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1 // configuration, listening, serving
	exitUsage = 2 // bad command line
)

// Run runs the exporter until SIGTERM or SIGINT and returns the exit status.
// Every failure a user can cause ends with one line on stderr.
func Run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	return run(ctx, args, stdout, stderr, hup)
}

// fail writes the one line a user sees when the program cannot go on.
func fail(stderr io.Writer, code int, format string, args ...any) int {
	msg := strings.Join(strings.Fields(fmt.Sprintf(format, args...)), " ")
	fmt.Fprintf(stderr, "%s: %s\n", Name, msg)
	return code
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, hup <-chan os.Signal) int {
	cl, o := newCommandLine()
	cl.UsageWriter(stdout)
	cl.ErrorWriter(stderr)
	// kingpin exits the process itself after --help and --version; we want
	// the status back instead, so run stays testable.
	terminated := -1
	cl.Terminate(func(code int) {
		if terminated < 0 {
			terminated = code
		}
	})
	_, err := cl.Parse(args)
	if terminated >= 0 {
		return terminated
	}
	if err != nil {
		return fail(stderr, exitUsage, "%v (see --help)", flagError(cl, args, err))
	}
	if !strings.HasPrefix(o.telemetryPath, "/") || o.telemetryPath == "/" || strings.HasPrefix(o.telemetryPath, "/-/") {
		return fail(stderr, exitUsage, "--web.telemetry-path %q: give a path starting with / other than / and /-/...", o.telemetryPath)
	}
	if o.concurrency < 1 || o.maxLabelValues < 1 {
		return fail(stderr, exitUsage, "--scrape.concurrency and --label.max-values must be at least 1 (got %d and %d)", o.concurrency, o.maxLabelValues)
	}
	if o.configCheck {
		if o.demo {
			return fail(stderr, exitUsage, "--config.check checks a configuration file; --demo needs none")
		}
		return checkConfig(o.configFile, clientBuilder{logger: log.NewNopLogger()}.fileBuilder(o.configFile), stdout, stderr)
	}
	if *o.web.WebConfigFile != "" {
		if err := web.Validate(*o.web.WebConfigFile); err != nil {
			return fail(stderr, exitError, "web config file %q: %v", *o.web.WebConfigFile, err)
		}
	}
	if err := checkListen(o.web); err != nil {
		return fail(stderr, exitError, "%v", err)
	}

	logger, slogger := newLoggers(stderr, o.logLevel, o.logFormat)
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		versioncollector.NewCollector(Name),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	exporter, err := collector.New(collector.Options{
		Logger:         log.With(logger, "component", "collector"),
		Enabled:        o.collectors(),
		Concurrency:    o.concurrency,
		MaxLabelValues: o.maxLabelValues,
		StateFile:      o.stateFile,
	})
	if err != nil {
		return fail(stderr, exitUsage, "%v", err)
	}
	var state *stateFile
	if o.stateFile != "" {
		state = newStateFile(o.stateFile, exporter, log.With(logger, "component", "state"))
		reg.MustRegister(savingCollector{exporter, state})
	} else {
		reg.MustRegister(exporter)
	}
	// The API call metrics live in a registry gathered after the main one
	// (Gatherers gather in order), so a scrape shows the calls it made
	// itself; in the same registry they would be read while the polls run.
	apiReg := prometheus.NewRegistry()
	builder := clientBuilder{observer: collector.NewAPIObserver(apiReg), logger: log.With(logger, "component", "apiclient")}

	source := func() (*config.Config, error) { return config.Load(o.configFile) }
	build := builder.fileBuilder(o.configFile)
	var sim *demo.Demo
	if o.demo {
		if sim, err = demo.Start(logger); err != nil {
			return fail(stderr, exitError, "%v", err)
		}
		defer sim.Close()
		demoCfg := sim.Config()
		source = func() (*config.Config, error) { return demoCfg, nil }
		build = builder.build
	}
	r := newReloader(reg, log.With(logger, "component", "config"), source, build, exporter.SetClusters)
	if err := r.load(); err != nil {
		return fail(stderr, exitError, "%v", err)
	}
	if state != nil {
		if err := state.restore(); err != nil {
			return fail(stderr, exitError, "%v", err)
		}
		go state.run()
		defer state.close() // after the server stopped: the last save
	}
	var afterProbe func()
	if state != nil {
		afterProbe = state.saveSoon
	}
	handler, err := newHandler(reg, prometheus.Gatherers{reg, apiReg}, o.telemetryPath, r, probeHandler(exporter, afterProbe, logger), logger)
	if err != nil {
		return fail(stderr, exitError, "%v", err)
	}

	level.Info(logger).Log("msg", "starting "+Name, "version", version.Info(), "build_context", version.BuildContext())
	cfg := r.config()
	if o.demo {
		// First contact now, so the demo's opening events count.
		if _, err := reg.Gather(); err != nil {
			level.Warn(logger).Log("msg", "demo: first scrape", "err", err)
		}
		sim.Play()
	} else {
		level.Info(logger).Log("msg", "configuration loaded", "file", o.configFile,
			"clusters", len(cfg.Clusters), "nodes", cfg.NodeCount())
	}
	return serve(ctx, handler, o.web, logger, slogger, r, hup, stderr)
}

// flagError names the flag in kingpin's value errors, which only quote the
// value ("strconv.ParseInt: parsing \"many\": invalid syntax").
func flagError(cl *kingpin.Application, args []string, err error) error {
	pc, perr := cl.ParseContext(args)
	if perr != nil || pc == nil {
		return err
	}
	for i := len(pc.Elements) - 1; i >= 0; i-- {
		e := pc.Elements[i]
		f, ok := e.Clause.(*kingpin.FlagClause)
		if ok && e.Value != nil && strings.Contains(err.Error(), *e.Value) {
			var ne *strconv.NumError
			if errors.As(err, &ne) {
				return fmt.Errorf("--%s: %q is not a number", f.Model().Name, *e.Value)
			}
			return fmt.Errorf("--%s: %w", f.Model().Name, err)
		}
	}
	return err
}

// serve runs the HTTP server until ctx ends, reloading on SIGHUP.
func serve(ctx context.Context, handler http.Handler, flags *web.FlagConfig, logger log.Logger,
	slogger *slog.Logger, r *reloader, hup <-chan os.Signal, stderr io.Writer) int {
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- web.ListenAndServe(srv, flags, slogger) }()
	for {
		select {
		case err := <-served:
			if err != nil && !errors.Is(err, http.ErrServerClosed) {
				return fail(stderr, exitError, "%v", err)
			}
			return exitOK
		case <-hup:
			level.Info(logger).Log("msg", "SIGHUP: reloading the configuration")
			_ = r.reload() // logged; the old configuration stays on failure
		case <-ctx.Done():
			level.Info(logger).Log("msg", "shutting down")
			shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := srv.Shutdown(shutCtx)
			cancel()
			<-served
			if err != nil {
				level.Warn(logger).Log("msg", "shutdown", "err", err)
			}
			return exitOK
		}
	}
}

// checkListen binds every TCP listen address once before anything is
// logged, so a taken port is reported as the one line of a failed start.
func checkListen(flags *web.FlagConfig) error {
	if flags.WebSystemdSocket != nil && *flags.WebSystemdSocket {
		return nil
	}
	for _, addr := range *flags.WebListenAddresses {
		if strings.HasPrefix(addr, "vsock://") {
			continue
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("--web.listen-address %q: %v", addr, listenProblem(err))
		}
		l.Close()
	}
	return nil
}

func listenProblem(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		var se *os.SyscallError
		if errors.As(oe.Err, &se) {
			return se.Err // "address already in use", "permission denied"
		}
		return oe.Err
	}
	return err
}

// checkConfig is --config.check: one line per problem, or a summary. It
// builds the console clients too (TLS files are parsed then), without
// contacting any console.
func checkConfig(path string, build func(*config.Config) ([]collector.Cluster, error), stdout, stderr io.Writer) int {
	cfg, err := config.Load(path)
	if err == nil {
		_, err = build(cfg)
	}
	if err != nil {
		var ce *config.Error
		if errors.As(err, &ce) {
			for _, l := range ce.Lines() {
				fail(stderr, exitError, "%s", l)
			}
			return exitError
		}
		return fail(stderr, exitError, "%v", err)
	}
	fmt.Fprintf(stdout, "%s: config file %q is valid: %d cluster(s), %d node(s)\n", Name, path, len(cfg.Clusters), cfg.NodeCount())
	return exitOK
}
