// What a user of the mixin may change, e.g. in kube-prometheus:
//
//   (import 'indexima-mixin/mixin.libsonnet') + {
//     _config+:: { indeximaSelector: 'job="indexima-exporter"', exporterJobSelector: 'job="indexima-exporter"' },
//   }
//
// The defaults render exactly the files shipped in deploy/prometheus/rules/
// and dashboards/ (a test checks it).
{
  _config+:: {
    // Matchers added to every indexima_* selector of the alerts (and to the
    // job variable of the dashboards), e.g. 'job="indexima-exporter"'.
    // Empty: every series of that name, which is only ever this exporter's.
    indeximaSelector: '',
    // Matchers of the exporter's scrape targets in `up` (IndeximaExporterDown),
    // and of its process metrics on the exporter dashboard. The default
    // matches the job names of the shipped examples (indexima, indexima_exporter, ...).
    exporterJobSelector: 'job=~".*indexima.*"',

    // Alerts on events: how long after the event they stay active, and how
    // long the growth must be seen before they fire.
    nodeDownWindow: '5m',  // IndeximaNodeDownReported
    nodeDownFor: '1m',
    memoryLowWindow: '10m',  // IndeximaMemoryLow
    memoryLowFor: '1m',
    credentialsRefusedWindow: '10m',  // IndeximaConsoleCredentialsRefused
    credentialsRefusedFor: '1m',
    // How far back an event alert looks for a counter's previous value,
    // across a gap in the scrapes (exporter down, then catching up from its
    // state file).
    counterLookBack: '1h',

    // Alerts on states: how long the state must last.
    nodeUnreachableFor: '5m',
    hyperIndexUnloadedFor: '10m',
    clusterNotReadyFor: '15m',
    clusterStoppedFor: '5m',
    consoleUnreachableFor: '5m',
    eventsMissedFor: '10m',
    nodeClockBehindFor: '15m',
    collectorFailedFor: '10m',
    exporterDownFor: '5m',

    // Severities.
    nodeDownSeverity: 'critical',
    consoleUnreachableSeverity: 'critical',
    exporterDownSeverity: 'critical',

    // Where each alert's runbook_url points (anchor: the alert name, lower case).
    runbookURL: 'https://github.com/indexima-exporter/indexima_exporter/blob/main/docs/runbook.md',
    // The exporter's /status page, where each alert's status_url points (at
    // the card of the node the alert is about, or at its cluster). Empty:
    // <--web.external-url>/status when the exporter runs with that flag,
    // else http://<instance>/status, the instance label being the exporter's
    // address when Prometheus scrapes its /metrics (prometheus.yml). With
    // /probe targets (prometheus-probe.yml) instance is the node: set the
    // exporter's address here, e.g.
    // 'http://indexima-exporter.monitoring.svc:9897/status'.
    statusURL: '',

    // The stream of the event log's lines in Loki (the label the shipped
    // Alloy and Vector configurations of deploy/logging/ give them), for
    // the events dashboard.
    eventLogSelector: 'job="indexima-events"',

    // Dashboards.
    dashboardTitlePrefix: 'Indexima / ',
    dashboardTags: ['indexima'],
    exporterDashboardTags: ['indexima-exporter'],
    dashboardRefresh: '30s',
    dashboardTimeFrom: 'now-6h',
    dashboardTimezone: '',
  },
}
