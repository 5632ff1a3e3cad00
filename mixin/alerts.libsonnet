// The alerting rules. deploy/prometheus/rules/indexima-alerts.yml is their
// rendering with the default _config (make mixin); the comment:: and
// forComment:: fields become its comments, and the header below its header.
local util = import 'lib/util.libsonnet';

{
  // The rule file's header: conventions every rule follows.
  alertsHeader:: |||
    Alerting rules for indexima_exporter.

    GENERATED from the monitoring mixin (mixin/alerts.libsonnet) by `make mixin`:
    edit the mixin, not this file; a test fails while the two differ.

    Conventions: CamelCase names, a `severity` label (critical: act now; warning:
    act today; info: for context), annotations `summary`, `description`,
    `runbook_url` (a section of docs/runbook.md, anchor = lower-cased alert name)
    and `status_url` (the exporter's /status page, at the card of the node the
    alert is about or at its cluster's section).

    One alert per incident: an alert about the cluster as a whole (a node
    reported down, the cluster stopped or not ready, the console unreachable)
    aggregates over the nodes that see it, `by (job, cluster, ...)`, so that it
    fires once whatever the number of nodes (or /probe targets) that show it;
    an alert about a node fires once per node, not once per hyperindex.

    Restart safety: a node's counters start at 0 when the exporter first reaches
    it; when the exporter restarts they continue from its state file
    (--events.state-file), or start again at 0 without one. No rule uses
    absent(): a series that vanishes with a restart never fires an alert. The
    unit tests in ../tests/ replay such restarts.

    "A counter x grew in the last W" is written, for the event alerts on
    counters (MEMORY_LOW, refused logins):
        x > last_over_time(x[1h] offset W)    # above its latest value at least W old
      or
        x > min_over_time(x[W])                # above a value inside the window
    and not as increase(x[W]) > 0, for two reasons:
      - window edges: Prometheus 3 reads a range window left-open (a sample
        exactly at t - W is outside [W]), 2.x closed. increase() needs the sample
        before the step inside the window, so its verdict at the end of the window
        hangs on that edge and differs between the two lines. Here the first
        comparison uses `offset W`, whose lookup is closed on the right on both
        lines: the alert is active from the step to exactly W after it, on 2.x and
        3.x alike (the unit tests run on both).
      - gaps: the exporter down for a few minutes, then counting from its state
        file what happened meanwhile. increase() misses that growth once the last
        sample before the gap has left the window (with a 5m window, a downtime of
        4 minutes left one evaluation: never enough for `for: 1m`); the latest value
        at least W old is looked up to an hour back, across the gap.
    A counter that starts again lower (exporter restarted without a state file)
    is not a growth: the new value is below the old one, and min_over_time()
    only sees a growth once the new process counts something.

    Labels: every per-node series carries `node` (the node's configured name);
    with several clusters configured, series also carry `cluster`. Matchers such
    as `on (job, instance, cluster)` work in both cases, because a missing label
    matches a missing label.
  |||,

  prometheusAlerts+:: {
    local c = $._config,
    // An indexima_* selector with the configured matchers.
    local m(metric, extra=[]) = util.selector(metric, [c.indeximaSelector] + extra),
    local runbook(alert) = c.runbookURL + '#' + std.asciiLower(alert),
    // status_url: the exporter's /status page (_config.statusURL, else the
    // instance's) at the card of a node (id node-[<cluster>-]<name>) or at
    // the section of a cluster (id cluster[-<cluster>]), as
    // internal/statuspage writes them.
    local statusPage(instance) = if c.statusURL != '' then c.statusURL else 'http://' + instance + '/status',
    local nodeStatus(node) = statusPage('{{ $labels.instance }}') + '#node-{{ with $labels.cluster }}{{ . }}-{{ end }}{{ ' + node + ' }}',
    // An alert aggregated over the nodes has no instance label: the
    // instance of one of its cluster's series, looked up when the
    // annotation is rendered.
    local clusterInstance = '{{ with printf `indexima_up{job=%q,cluster=%q}` $labels.job $labels.cluster | query }}{{ with first . }}{{ .Labels.instance }}{{ end }}{{ end }}',
    local clusterStatus = statusPage(clusterInstance) + '#cluster{{ with $labels.cluster }}-{{ . }}{{ end }}',
    local downNodeStatus = statusPage(clusterInstance) + '#node-{{ with $labels.cluster }}{{ . }}-{{ end }}{{ $labels.down_node }}',
    local exporterStatus = statusPage('{{ $labels.instance }}'),
    // "x grew in the last w" (see the header).
    local grew(x, w) = |||
      %(x)s
        > last_over_time(%(x)s[%(lb)s] offset %(w)s)
      or
      %(x)s
        > min_over_time(%(x)s[%(w)s])
    ||| % { x: x, w: w, lb: c.counterLookBack },

    groups+: [
      {
        name: 'indexima-cluster',
        rules: [
          {
            local w = c.nodeDownWindow,
            local last = m('indexima_node_down_last_report_timestamp_seconds'),
            alert: 'IndeximaNodeDownReported',
            comment:: |||
              One alert per (cluster, node reported down), whatever the number of
              nodes that report it: the age of the latest report, the newest over
              the reporting nodes (and /probe targets), is below %(w)s. A NODE_DOWN
              is a one-shot report (the cluster logs no "node is back" event), so
              the alert resolves by itself %(w)s after the latest report.
              max_over_time() bridges a gap in the scrapes shorter than the window
              (an exporter restart: staleness markers, then the series again, from
              the state file or from first contact's look-back), so a restart
              neither resolves the alert nor fires it a second time. The report's
              date is the reporting node's clock: a node whose clock is behind
              Prometheus's by more than the window never fires it (see
              IndeximaNodeClockBehind).
            ||| % { w: util.humanDuration(w) },
            expr: |||
              time() - max by (job, cluster, down_node) (
                max_over_time(%(last)s[%(w)s])
              )
              < %(s)d
            ||| % { last: last, w: w, s: util.seconds(w) },
            forComment:: |||
              One evaluation interval would do; a minute keeps the page as it was
              before this rule counted per down node.
            |||,
            'for': c.nodeDownFor,
            labels: { severity: c.nodeDownSeverity },
            annotations: {
              summary: 'Indexima node {{ $labels.down_node }}{{ with $labels.cluster }} of cluster {{ . }}{{ end }} is reported down',
              description: 'A node of the cluster{{ with $labels.cluster }} {{ . }}{{ end }} logged a NODE_DOWN event naming node {{ $labels.down_node }} {{ $value | humanizeDuration }} ago (the latest report, whichever node logged it): the cluster cannot reach that node. The alert resolves ' + util.humanDuration(w) + " after the latest report. A number instead of a name: give that node its number in the exporter's configuration.",
              runbook_url: runbook('IndeximaNodeDownReported'),
              status_url: downNodeStatus,
            },
          },
          {
            local f = c.nodeUnreachableFor,
            alert: 'IndeximaNodeUnreachable',
            comment:: |||
              Not raised while the whole console is unreachable: that is
              IndeximaConsoleUnreachable, and one alert per node would only add noise.
            |||,
            expr: |||
              %s == 0
              unless on (job, instance, cluster)
              %s == 0
            ||| % [m('indexima_up'), m('indexima_console_up')],
            'for': f,
            labels: { severity: 'warning' },
            annotations: {
              summary: 'Indexima node {{ $labels.node }} does not answer through the console',
              description: 'The exporter {{ $labels.instance }} could not poll node {{ $labels.node }}{{ with $labels.cluster }} of cluster {{ . }}{{ end }} through the console for ' + util.humanDuration(f) + ', while the console itself answers. The node may be down, or the console cannot reach its monitoring port.',
              runbook_url: runbook('IndeximaNodeUnreachable'),
              status_url: nodeStatus('$labels.node'),
            },
          },
          {
            local w = c.memoryLowWindow,
            alert: 'IndeximaMemoryLow',
            comment:: |||
              events_total{event="MEMORY_LOW"} exists at 0 from the first contact, so
              the first episode is a growth too (see the header for the form).
            |||,
            expr: grew(m('indexima_events_total', ['event="MEMORY_LOW"']), w),
            'for': c.memoryLowFor,
            labels: { severity: 'warning' },
            annotations: {
              summary: 'Indexima node {{ $labels.node }} ran out of memory',
              description: 'Node {{ $labels.node }}{{ with $labels.cluster }} of cluster {{ . }}{{ end }} logged MEMORY_LOW in the last ' + util.humanDuration(w) + ': it ran out of memory and unloads hyperindexes to recover, so queries on them get slower.',
              runbook_url: runbook('IndeximaMemoryLow'),
              status_url: nodeStatus('$labels.node'),
            },
          },
          {
            local f = c.hyperIndexUnloadedFor,
            alert: 'IndeximaHyperIndexesUnloaded',
            comment:: |||
              State, not event: the alert lasts until the indexes are loaded again
              (HYPER_INDEX_LOADED), whatever the number of events in between. One
              alert per node, not per hyperindex: a MEMORY_LOW unloads several at
              once, and that is one incident; the value is how many are unloaded.
            |||,
            expr: |||
              count by (job, instance, cluster, node) (
                %s == 0
              )
            ||| % m('indexima_hyperindex_loaded'),
            'for': f,
            labels: { severity: 'warning' },
            annotations: {
              summary: '{{ $value }} hyperindex(es) unloaded on Indexima node {{ $labels.node }}',
              description: 'Node {{ $labels.node }}{{ with $labels.cluster }} of cluster {{ . }}{{ end }} has had hyperindexes unloaded for more than ' + util.humanDuration(f) + ' (usually after MEMORY_LOW), {{ $value }} now (indexima_hyperindex_loaded == 0 names them); queries that need them are slow until they are loaded again.',
              runbook_url: runbook('IndeximaHyperIndexesUnloaded'),
              status_url: nodeStatus('$labels.node'),
            },
          },
          {
            local f = c.clusterNotReadyFor,
            alert: 'IndeximaClusterNotReady',
            comment:: |||
              One alert per cluster: every node logs the cluster's start, and the
              state may go from starting to initializing without a new incident.
              The value is the number of nodes not ready.
            |||,
            expr: |||
              count by (job, cluster) (
                %s == 1
              )
            ||| % m('indexima_cluster_state', ['state=~"starting|initializing"']),
            'for': f,
            labels: { severity: 'warning' },
            annotations: {
              summary: 'The Indexima cluster{{ with $labels.cluster }} {{ . }}{{ end }} has not been ready for ' + util.humanDuration(f),
              description: '{{ $value }} node(s) of the cluster{{ with $labels.cluster }} {{ . }}{{ end }} are still starting or initializing ' + util.humanDuration(f) + ' after CLUSTER_START or CLUSTER_INIT: their tables are not all available yet.',
              runbook_url: runbook('IndeximaClusterNotReady'),
              status_url: clusterStatus,
            },
          },
          {
            local f = c.clusterStoppedFor,
            alert: 'IndeximaClusterStopped',
            comment:: |||
              CLUSTER_STOP follows a stop command: usually deliberate, hence info.
              One alert per cluster (every node logs the stop); the value is the
              number of nodes stopped.
            |||,
            expr: |||
              count by (job, cluster) (
                %s == 1
              )
            ||| % m('indexima_cluster_state', ['state="stopped"']),
            'for': f,
            labels: { severity: 'info' },
            annotations: {
              summary: 'The Indexima cluster{{ with $labels.cluster }} {{ . }}{{ end }} is stopped',
              description: '{{ $value }} node(s) of the cluster{{ with $labels.cluster }} {{ . }}{{ end }} logged CLUSTER_STOP and have not started again for ' + util.humanDuration(f) + '.',
              runbook_url: runbook('IndeximaClusterStopped'),
              status_url: clusterStatus,
            },
          },
        ],
      },
      {
        name: 'indexima-exporter',
        rules: [
          {
            local f = c.consoleUnreachableFor,
            alert: 'IndeximaConsoleUnreachable',
            comment:: |||
              One alert per cluster: with /probe targets (prometheus-probe.yml)
              every node's probe says that the console is down.
            |||,
            expr: |||
              max by (job, cluster) (%s) == 0
            ||| % m('indexima_console_up'),
            'for': f,
            labels: { severity: c.consoleUnreachableSeverity },
            annotations: {
              summary: 'The Indexima console{{ with $labels.cluster }} of cluster {{ . }}{{ end }} is unreachable',
              description: 'The exporter could not use the console{{ with $labels.cluster }} of cluster {{ . }}{{ end }} for ' + util.humanDuration(f) + ': no node of that cluster is monitored.',
              runbook_url: runbook('IndeximaConsoleUnreachable'),
              status_url: clusterStatus,
            },
          },
          {
            local w = c.credentialsRefusedWindow,
            alert: 'IndeximaConsoleCredentialsRefused',
            comment:: |||
              The exporter creates the failure series at 0 when it starts
              (collector.NewAPIObserver), so the first refusal is a growth too (see
              the header for the form).
            |||,
            expr: grew(m('indexima_exporter_logins_total', ['result="failure"']), w),
            'for': c.credentialsRefusedFor,
            labels: { severity: 'warning' },
            annotations: {
              summary: "The Indexima console{{ with $labels.cluster }} of cluster {{ . }}{{ end }} refuses the exporter's credentials",
              description: 'The console{{ with $labels.cluster }} of cluster {{ . }}{{ end }} refused a login of the exporter {{ $labels.instance }} in the last ' + util.humanDuration(w) + ' (bad user name or password). Once the current token expires, the cluster is no longer monitored.',
              runbook_url: runbook('IndeximaConsoleCredentialsRefused'),
              status_url: exporterStatus,
            },
          },
          {
            local f = c.eventsMissedFor,
            alert: 'IndeximaEventsMissed',
            comment:: |||
              reported is the console's own number of the node's events since the
              exporter first contacted it (its event/count answers, running events
              aside, late events included); counted is what the exporter turned
              into metrics. They are equal exactly when nothing was missed
              (docs/counting.md). A poll may count an event that completed right
              after the console was asked (counted ahead of reported, never the
              other way), and events found missing are looked for at once; a
              difference that lasts %s is a loss.
            ||| % util.humanDuration(f),
            expr: |||
              %s
                - sum without (event) (%s)
              > 0
            ||| % [m('indexima_events_reported_total'), m('indexima_events_total')],
            'for': f,
            labels: { severity: 'warning' },
            annotations: {
              summary: 'The exporter misses events of Indexima node {{ $labels.node }}',
              description: 'Node {{ $labels.node }}{{ with $labels.cluster }} of cluster {{ . }}{{ end }} holds {{ $value | printf "%.0f" }} more events since the exporter {{ $labels.instance }} first contacted it than the exporter counted: metrics of this node undercount.',
              runbook_url: runbook('IndeximaEventsMissed'),
              status_url: nodeStatus('$labels.node'),
            },
          },
          {
            alert: 'IndeximaNodeClockBehind',
            comment:: |||
              A node dates its events by its own clock; the console's is in the
              Date header of its answers. Events that become visible dated more
              than the late window behind the console's clock can be lost
              (--events.late-window). The gauge is absent while the listings
              cannot tell the lag within 5 s (docs/counting.md, "Clock lag").
            |||,
            expr: |||
              %s > %s
            ||| % [m('indexima_node_clock_lag_seconds'), m('indexima_events_late_window_seconds')],
            'for': c.nodeClockBehindFor,
            labels: { severity: 'warning' },
            annotations: {
              summary: "The clock of Indexima node {{ $labels.node }} is behind the console's by more than the late window",
              description: "Node {{ $labels.node }}{{ with $labels.cluster }} of cluster {{ . }}{{ end }} dates its events about {{ $value | humanizeDuration }} behind the console's clock, more than the exporter {{ $labels.instance }}'s late window: its events can be lost.",
              runbook_url: runbook('IndeximaNodeClockBehind'),
              status_url: nodeStatus('$labels.node'),
            },
          },
          {
            local f = c.collectorFailedFor,
            alert: 'IndeximaExporterCollectorFailed',
            comment:: |||
              A sub-collector fails when a node it reports on could not be polled.
              Not raised while a console or a node of this exporter is unreachable:
              IndeximaConsoleUnreachable and IndeximaNodeUnreachable say it. The
              collector series has no cluster label, hence `on (job, instance)`.
            |||,
            expr: |||
              %s == 0
              unless on (job, instance)
              (%s == 0 or %s == 0)
            ||| % [m('indexima_exporter_collector_success'), m('indexima_console_up'), m('indexima_up')],
            'for': f,
            labels: { severity: 'warning' },
            annotations: {
              summary: 'The {{ $labels.collector }} collector of indexima_exporter {{ $labels.instance }} fails',
              description: 'The {{ $labels.collector }} collector of the exporter {{ $labels.instance }}{{ with $labels.cluster }} (cluster {{ . }}){{ end }} has failed on every scrape for ' + util.humanDuration(f) + ': its metrics are missing or stale.',
              runbook_url: runbook('IndeximaExporterCollectorFailed'),
              status_url: exporterStatus,
            },
          },
          {
            local f = c.exporterDownFor,
            alert: 'IndeximaExporterDown',
            comment:: 'Matches the job names of the shipped examples (indexima, indexima_exporter, ...).',
            expr: util.selector('up', [c.exporterJobSelector]) + ' == 0',
            'for': f,
            labels: { severity: c.exporterDownSeverity },
            annotations: {
              summary: 'indexima_exporter {{ $labels.instance }} is down',
              description: 'Prometheus could not scrape the exporter {{ $labels.instance }} (job {{ $labels.job }}) for ' + util.humanDuration(f) + ': no Indexima metric of it is collected and no other Indexima alert can fire.',
              runbook_url: runbook('IndeximaExporterDown'),
              status_url: exporterStatus,
            },
          },
        ],
      },
    ],
  },
}
