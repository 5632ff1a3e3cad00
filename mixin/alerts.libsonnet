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
    act today; info: for context), annotations `summary`, `description` and
    `runbook_url` (a section of docs/runbook.md, anchor = lower-cased alert name).

    Restart safety: a node's counters start at 0 when the exporter first reaches
    it; when the exporter restarts they continue from its state file
    (--events.state-file), or start again at 0 without one. No rule uses
    absent(): a series that vanishes with a restart never fires an alert. The
    unit tests in ../tests/ replay such restarts.

    "A counter x grew in the last W" is written, for every event alert:
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
            local r = m('indexima_node_down_reports_total'),
            local e = m('indexima_events_total', ['event="NODE_DOWN"']),
            alert: 'IndeximaNodeDownReported',
            comment:: |||
              A NODE_DOWN event is a one-shot report (the cluster logs no "node is
              back" event), so the alert stays active for %(w)s after a report is
              counted and then resolves by itself.
              Branches, one (node, down_node) pair each:
               1. the pair's counter grew (see the header; a pair's series exists
                  only once a report was counted, so it never starts at 0 and
                  min_over_time() adds nothing here);
               2. the pair's counter is below its value of %(w)s ago: the
                  exporter restarted without restoring its counters and has counted
                  reports of the pair since (the series exists only then);
               3. a pair reported for the first time: its series appears directly
                  at 1, with no value before it. It counts when the series is new
                  (none in the last hour before the window) AND the reporting node's
                  NODE_DOWN event counter, which exists from the first contact,
                  grew. That second condition keeps a scrape gap from looking like
                  a new report;
               4. the same for a pair whose series came back within the window
                  (fewer samples in it than the reporter's event counter, scraped
                  from the same target): after a restart without a state file, a
                  pair counted again exactly as many times as before shows no other
                  change. Branches 1 to 3 end exactly %(w)s after the report on
                  both Prometheus lines; this one, whose only job is that rare case,
                  may end one scrape earlier on 3.x (sample counts of a left-open
                  window).
              Every branch keeps the pair's own labels, so `or` cannot yield two
              alerts for one pair.
            ||| % { w: util.humanDuration(w) },
            expr: |||
              %(r)s
                > last_over_time(%(r)s[%(lb)s] offset %(w)s)
              or
              %(r)s
                < last_over_time(%(r)s[%(lb)s] offset %(w)s)
              or
              (
                  (
                      %(r)s
                    unless
                      last_over_time(%(r)s[%(lb)s] offset %(w)s)
                  )
                or
                    count_over_time(%(r)s[%(w)s])
                  < ignoring (down_node, event) group_left
                    count_over_time(%(e)s[%(w)s])
              )
              and ignoring (down_node, event)
              (
                  %(e)s
                    > last_over_time(%(e)s[%(lb)s] offset %(w)s)
                or
                  %(e)s
                    > min_over_time(%(e)s[%(w)s])
              )
            ||| % { r: r, e: e, w: w, lb: c.counterLookBack },
            forComment:: |||
              One evaluation interval would do; a minute gives the exporter's
              other nodes time to report the same node before the first page.
            |||,
            'for': c.nodeDownFor,
            labels: { severity: c.nodeDownSeverity },
            annotations: {
              summary: 'Indexima node {{ $labels.node }} reports node number {{ $labels.down_node }} down',
              description: 'Node {{ $labels.node }}{{ with $labels.cluster }} of cluster {{ . }}{{ end }} logged a NODE_DOWN event naming node number {{ $labels.down_node }}, counted by the exporter in the last ' + util.humanDuration(w) + ' (logged earlier if the exporter was down meanwhile): the cluster cannot reach that node.',
              runbook_url: runbook('IndeximaNodeDownReported'),
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
            },
          },
          {
            local f = c.hyperIndexUnloadedFor,
            alert: 'IndeximaHyperIndexesUnloaded',
            comment:: |||
              State, not event: the alert lasts until the index is loaded again
              (HYPER_INDEX_LOADED), whatever the number of events in between.
            |||,
            expr: m('indexima_hyperindex_loaded') + ' == 0',
            'for': f,
            labels: { severity: 'warning' },
            annotations: {
              summary: 'Hyperindex {{ $labels.index }} is unloaded on Indexima node {{ $labels.node }}',
              description: 'Hyperindex {{ $labels.index }} on node {{ $labels.node }}{{ with $labels.cluster }} of cluster {{ . }}{{ end }} has been unloaded for more than ' + util.humanDuration(f) + ' (usually after MEMORY_LOW); queries that need it are slow until it is loaded again.',
              runbook_url: runbook('IndeximaHyperIndexesUnloaded'),
            },
          },
          {
            local f = c.clusterNotReadyFor,
            alert: 'IndeximaClusterNotReady',
            expr: m('indexima_cluster_state', ['state=~"starting|initializing"']) + ' == 1',
            'for': f,
            labels: { severity: 'warning' },
            annotations: {
              summary: 'Indexima node {{ $labels.node }} has been {{ $labels.state }} for ' + util.humanDuration(f),
              description: 'Node {{ $labels.node }}{{ with $labels.cluster }} of cluster {{ . }}{{ end }} is still {{ $labels.state }} ' + util.humanDuration(f) + ' after CLUSTER_START or CLUSTER_INIT: its tables are not all available yet.',
              runbook_url: runbook('IndeximaClusterNotReady'),
            },
          },
          {
            local f = c.clusterStoppedFor,
            alert: 'IndeximaClusterStopped',
            comment:: 'CLUSTER_STOP follows a stop command: usually deliberate, hence info.',
            expr: m('indexima_cluster_state', ['state="stopped"']) + ' == 1',
            'for': f,
            labels: { severity: 'info' },
            annotations: {
              summary: 'Indexima node {{ $labels.node }} is stopped',
              description: 'Node {{ $labels.node }}{{ with $labels.cluster }} of cluster {{ . }}{{ end }} logged CLUSTER_STOP and has not started again for ' + util.humanDuration(f) + '.',
              runbook_url: runbook('IndeximaClusterStopped'),
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
            expr: m('indexima_console_up') + ' == 0',
            'for': f,
            labels: { severity: c.consoleUnreachableSeverity },
            annotations: {
              summary: 'The Indexima console{{ with $labels.cluster }} of cluster {{ . }}{{ end }} is unreachable',
              description: 'The exporter {{ $labels.instance }} could not use the console{{ with $labels.cluster }} of cluster {{ . }}{{ end }} for ' + util.humanDuration(f) + ': no node of that cluster is monitored.',
              runbook_url: runbook('IndeximaConsoleUnreachable'),
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
            },
          },
          {
            alert: 'IndeximaNodeClockBehind',
            comment:: |||
              A node dates its events by its own clock, the console stamps `last`
              with its own; events dated more than the late window behind `last`
              can be lost (--events.late-window).
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
            },
          },
        ],
      },
    ],
  },
}
