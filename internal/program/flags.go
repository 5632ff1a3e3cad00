package program

import (
	"strconv"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/alecthomas/units"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"

	"github.com/indexima-exporter/indexima_exporter/collector"
	"github.com/indexima-exporter/indexima_exporter/poller"
	"github.com/indexima-exporter/indexima_exporter/tracker"
)

const (
	// Name of the program, in errors, logs, the landing page and metrics.
	Name = "indexima_exporter"
	// DefaultPort is the exporter's port, chosen not to collide with
	// well-known exporters. Everything that names the port uses this.
	DefaultPort = "9897"
	// DefaultListenAddress listens on every interface.
	DefaultListenAddress = ":" + DefaultPort
)

// options are the parsed command line.
type options struct {
	web            *web.FlagConfig
	externalURL    string // --web.external-url, without a trailing slash
	telemetryPath  string
	configFile     string
	configCheck    bool
	configConnect  bool
	demo           bool
	stateFile      string
	eventLog       string
	eventLogSize   units.Base2Bytes
	eventLogKeep   int
	concurrency    int
	timeoutOffset  time.Duration
	probeOnly      bool
	maxLabelValues int
	lateWindow     time.Duration
	lookBack       time.Duration
	lookBackCalls  int
	logLevel       string
	logFormat      string
	collectors     func() map[string]bool
}

// newCommandLine declares every flag in one kingpin application.
func newCommandLine() (*kingpin.Application, *options) {
	app := kingpin.New(Name, "Prometheus exporter for the events of Indexima clusters, read through the cluster console's REST API.")
	app.HelpFlag.Short('h')
	app.Version(version.Print(Name))
	o := &options{}
	o.web = kingpinflag.AddFlags(app, DefaultListenAddress)
	app.Flag("web.telemetry-path", "Path under which to expose metrics.").
		Default("/metrics").StringVar(&o.telemetryPath)
	app.Flag("web.external-url", "The URL under which the exporter is reached from a browser (behind a reverse proxy, in a container): the links it gives out start with it (the landing page's, /sd's, and the alerts' status_url through indexima_exporter_web_external_url_info). Empty: links relative to the request (the alerts: http://<instance>).").
		Default("").StringVar(&o.externalURL)
	app.Flag("config.file", "Configuration file (YAML): consoles and nodes. See docs/configuration.md.").
		Default("indexima.yml").StringVar(&o.configFile)
	app.Flag("config.check", "Validate the configuration file and exit: 0 if it is usable, 1 with one line per problem. Contacts no console.").
		BoolVar(&o.configCheck)
	app.Flag("config.check.connect", "Validate the configuration file as --config.check does, then log in to each console and call each node once (event/count), and exit: 0 if all answered, 1 with one line per failure.").
		BoolVar(&o.configConnect)
	app.Flag("demo", "Start a simulated cluster in-process and export it (no configuration file needed).").
		BoolVar(&o.demo)
	app.Flag("events.state-file", "File where event cursors are saved, so a restart neither loses nor recounts events (empty: none).").
		Default("").StringVar(&o.stateFile)
	app.Flag("events.log", "File to which every counted event is written once, as one JSON line (docs/events.md); - for the standard output (empty: none).").
		Default("").StringVar(&o.eventLog)
	app.Flag("events.log.max-size", "Size at which --events.log is rotated (rounded up to a MiB).").
		Default("100MiB").BytesVar(&o.eventLogSize)
	app.Flag("events.log.max-backups", "Rotated files of --events.log kept (at least 1): the log takes at most its size times this plus one.").
		Default("5").IntVar(&o.eventLogKeep)
	app.Flag("events.late-window", "How late an event may become visible and still be counted exactly once: listed only once completed, or dated by a node clock behind the console's (docs/counting.md).").
		Default(tracker.DefaultWindow.String()).DurationVar(&o.lateWindow)
	app.Flag("events.lookback", "At first contact with a node, how far back to read to learn its state (cluster state, tables, hyperindexes, preload).").
		Default(tracker.DefaultLookBack.String()).DurationVar(&o.lookBack)
	app.Flag("events.lookback-calls", "At first contact with a node, the most console calls spent reading back.").
		Default(strconv.Itoa(tracker.DefaultLookBackCalls)).IntVar(&o.lookBackCalls)
	app.Flag("scrape.concurrency", "Number of nodes polled at once (a scrape lasts about as long as the slowest node while every node has a slot).").
		Default(strconv.Itoa(poller.DefaultConcurrency)).IntVar(&o.concurrency)
	app.Flag("scrape.timeout-offset", "Subtracted from the scrape timeout Prometheus announces (X-Prometheus-Scrape-Timeout-Seconds) to get the deadline of a scrape's polls; a node not done by then is down for that scrape. Without the header the deadline is 10s less this offset.").
		Default("500ms").DurationVar(&o.timeoutOffset)
	app.Flag("scrape.probe-only", "Poll nodes only through /probe (sharded replicas, docs/scaling.md): /metrics then serves the exporter's own metrics and calls no node.").
		BoolVar(&o.probeOnly)
	app.Flag("label.max-values", "Maximum number of distinct values per node of the table, index and down-node labels.").
		Default("500").IntVar(&o.maxLabelValues)
	app.Flag("log.level", "Only log messages with the given severity or above. One of: [debug, info, warn, error]").
		Default("info").EnumVar(&o.logLevel, "debug", "info", "warn", "error")
	app.Flag("log.format", "Output format of log messages. One of: [logfmt, json]").
		Default("logfmt").EnumVar(&o.logFormat, "logfmt", "json")
	o.collectors = collector.RegisterFlags(app)
	return app, o
}
