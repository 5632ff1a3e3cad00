local g = import '../lib/grafana.libsonnet';
local util = import '../lib/util.libsonnet';

{
  grafanaDashboards+:: {
    'indexima-overview.json':
      local c = $._config;
      // Every query selects the exporter's series (_config.indeximaSelector)
      // and the dashboard's variables; "All" of cluster and node is .*, which
      // also matches series without the label (a single cluster has none).
      local selectors = util.dashboardSelectors(c.indeximaSelector);
      local q(expr) = expr % selectors;
      g.dashboard(
        uid='indexima-overview',
        title=c.dashboardTitlePrefix + 'Overview',
        description='Indexima cluster health from indexima_exporter: nodes, cluster state, events, hyperindexes, tables, durations.',
        tags=c.dashboardTags,
        links=[g.link('Indexima exporter', c.exporterDashboardTags[0])],
        refresh=c.dashboardRefresh,
        timeFrom=c.dashboardTimeFrom,
        timezone=c.dashboardTimezone,
        // Marks on every time series panel where the selected nodes logged
        // these events, from the same counters as the panels: increase over
        // the rate interval at each step, so an event marks the steps whose
        // window holds it.
        annotations=[
          g.annotation(
            'NODE_DOWN reports',
            q('sum by (cluster, node) (increase(indexima_events_total{%(node)s, event="NODE_DOWN"}[$__rate_interval])) > 0'),
            title='NODE_DOWN reported by {{node}}',
            text='{{node}} logged NODE_DOWN: the cluster could not reach a node (which one: the table Nodes reported down).',
            color='red',
            tags=['cluster', 'node'],
          ),
          g.annotation(
            'Cluster stops and starts',
            q('sum by (cluster, node, event) (increase(indexima_events_total{%(node)s, event=~"CLUSTER_STOP|CLUSTER_START"}[$__rate_interval])) > 0'),
            title='{{event}} on {{node}}',
            text='{{node}} logged {{event}}.',
            color='blue',
            tags=['cluster', 'node', 'event'],
          ),
          g.annotation(
            'MEMORY_LOW episodes',
            q('sum by (cluster, node) (increase(indexima_events_total{%(node)s, event="MEMORY_LOW"}[$__rate_interval])) > 0'),
            title='MEMORY_LOW on {{node}}',
            text='{{node}} ran out of memory and unloads hyperindexes to recover.',
            color='orange',
            tags=['cluster', 'node'],
          ),
        ],
        variables=[
          g.queryVariable('job', 'Job', util.selector('indexima_up', [c.indeximaSelector]), '.+'),
          g.queryVariable('instance', 'Instance', q('indexima_up{%(job)s}'), '.+'),
          g.queryVariable('cluster',
                          'Cluster',
                          q('indexima_up{%(exporter)s}'),
                          '.*',
                          description='Exists only when the exporter monitors several clusters; All matches series without the label too.'),
          g.queryVariable('node', 'Node', q('indexima_up{%(cluster)s}'), '.*'),
        ],
        panels=[
          g.row('Cluster'),
          g.stat(
            'Nodes up',
            "Nodes that answered the exporter's latest poll through the console (indexima_up), out of the nodes configured.",
            [
              g.instant('A', q('sum(indexima_up{%(node)s})'), 'up'),
              g.instant('B', q('count(indexima_up{%(node)s})'), 'configured'),
            ],
            w=5,
            unit='short',
            textMode='value_and_name',
          ),
          g.stat(
            'Console up',
            '1 if the console answered the latest scrape (indexima_console_up), per cluster.',
            [
              g.instant('A', q('min by (cluster) (indexima_console_up{%(cluster)s})'), '{{cluster}}'),
            ],
            w=3,
            unit='short',
            thresholds=[['red', null], ['green', 1]],
            mappings=g.valueMap([['0', 'down', 'red'], ['1', 'up', 'green']]),
            colorMode='background',
          ),
          g.stat(
            'NODE_DOWN reports (range)',
            "NODE_DOWN events logged by the selected nodes over the dashboard's time range.",
            [
              g.instant('A', q('sum(increase(indexima_events_total{%(node)s, event="NODE_DOWN"}[$__range]))'), 'NODE_DOWN'),
            ],
            w=4,
            thresholds=[['green', null], ['red', 1]],
            colorMode='background',
          ),
          g.stat(
            'MEMORY_LOW episodes (range)',
            "MEMORY_LOW events logged by the selected nodes over the dashboard's time range.",
            [
              g.instant('A', q('sum(increase(indexima_events_total{%(node)s, event="MEMORY_LOW"}[$__range]))'), 'MEMORY_LOW'),
            ],
            w=4,
            thresholds=[['green', null], ['orange', 1]],
            colorMode='background',
          ),
          g.stat(
            'Hyperindexes unloaded',
            'Hyperindexes currently unloaded on the selected nodes (indexima_hyperindex_loaded == 0).',
            [
              g.instant('A', q('sum(1 - indexima_hyperindex_loaded{%(node)s})'), 'unloaded'),
            ],
            w=4,
            thresholds=[['green', null], ['orange', 1]],
            colorMode='background',
          ),
          g.stat(
            'Running events',
            'Events running on the selected nodes at the latest poll (indexima_events_running).',
            [
              g.instant('A', q('sum(indexima_events_running{%(node)s})'), 'running'),
            ],
            w=4,
          ),
          g.stateTimeline(
            'Cluster state per node',
            'Cluster state as seen by each node (indexima_cluster_state state set), from CLUSTER_START, PRELOAD_FINISHED, CLUSTER_INIT and CLUSTER_STOP events.',
            [
              g.range('A', q(|||-
                max by (cluster, node) (
                    (indexima_cluster_state{%(node)s, state="stopped"} == 1) * 0
                  or (indexima_cluster_state{%(node)s, state="starting"} == 1) * 1
                  or (indexima_cluster_state{%(node)s, state="initializing"} == 1) * 2
                  or (indexima_cluster_state{%(node)s, state="ready"} == 1) * 3
                  or (indexima_cluster_state{%(node)s, state="unknown"} == 1) * 4
                )
              |||), '{{node}}'),
            ],
            g.valueMap([['0', 'stopped', 'red'], ['1', 'starting', 'yellow'], ['2', 'initializing', 'orange'], ['3', 'ready', 'green'], ['4', 'unknown', 'text']]),
            [['text', null]],
            color={ mode: 'fixed', fixedColor: 'text' },
          ),
          g.stateTimeline(
            'Node answers the exporter',
            "indexima_up per node: green when the node answered the exporter's poll through the console, red when not.",
            [
              g.range('A', q('max by (cluster, node) (indexima_up{%(node)s})'), '{{node}}'),
            ],
            g.valueMap([['0', 'down', 'red'], ['1', 'up', 'green']]),
            [['red', null], ['green', 1]],
          ),
          g.tablePanel(
            'Nodes',
            'One line per node: version (indexima_node_info), state, preload count and loaded tables and hyperindexes.',
            [
              g.table('A', q('max by (cluster, node, version) (indexima_node_info{%(node)s})')),
              g.table('B', q('max by (cluster, node) (indexima_preload_indexes_loaded{%(node)s})')),
              g.table('C', q('count by (cluster, node) (indexima_table_loaded{%(node)s})')),
              g.table('D', q('sum by (cluster, node) (indexima_hyperindex_loaded{%(node)s})')),
            ],
            [{ id: 'merge', options: {} }, g.organize(['Time', 'Value #A'], { cluster: 'Cluster', node: 'Node', version: 'Version', 'Value #B': 'Indexes preloaded', 'Value #C': 'Tables loaded', 'Value #D': 'Hyperindexes loaded' })],
            w=24,
            h=7,
          ),
          g.row('Events'),
          g.timeseries(
            'Event rate by type',
            'Completed events per second, by event type (rate of indexima_events_total).',
            [
              g.range('A', q('sum by (event) (rate(indexima_events_total{%(node)s}[$__rate_interval]))'), '{{event}}'),
            ],
            'ops',
            stack=true,
          ),
          g.timeseries(
            'Running events by type',
            'Events running at each poll (indexima_events_running), by type.',
            [
              g.range('A', q('sum by (event) (indexima_events_running{%(node)s})'), '{{event}}'),
            ],
            'none',
            decimals=0,
          ),
          g.timeseries(
            'NODE_DOWN reports',
            'NODE_DOWN events per reporting node (bars). Which nodes were reported down is in the table beside.',
            [
              g.range('A', q('sum by (cluster, node) (increase(indexima_events_total{%(node)s, event="NODE_DOWN"}[$__rate_interval]))'), '{{node}}'),
            ],
            'none',
            bars=true,
            decimals=0,
          ),
          // One row per node reported down, as the alert sees it: the latest
          // report whichever node logged it, and how many nodes reported it.
          g.tablePanel(
            'Nodes reported down',
            "One row per node reported down (down_node: its configured name when the configuration gives it a number, else the number in the NODE_DOWN comment): the latest report, whichever of the selected nodes logged it (indexima_node_down_last_report_timestamp_seconds, known since the first contact's look-back), and how many of them reported it. IndeximaNodeDownReported fires while the latest report is less than its window old.",
            [
              g.table('A', q('max by (cluster, down_node) (indexima_node_down_last_report_timestamp_seconds{%(node)s}) * 1000')),
              g.table('B', q('count by (cluster, down_node) (indexima_node_down_last_report_timestamp_seconds{%(node)s})')),
            ],
            [
              { id: 'merge', options: {} },
              g.organize(['Time'], { cluster: 'Cluster', down_node: 'Node reported down', 'Value #A': 'Latest report', 'Value #B': 'Reporting nodes' }),
            ],
            w=12,
          ) {
            fieldConfig+: { overrides: [
              { matcher: { id: 'byName', options: 'Latest report' }, properties: [{ id: 'unit', value: 'dateTimeAsIso' }] },
            ] },
          },
          g.timeseries(
            'MEMORY_LOW episodes',
            'MEMORY_LOW events per node (bars): the node ran out of memory and unloads hyperindexes.',
            [
              g.range('A', q('sum by (cluster, node) (increase(indexima_events_total{%(node)s, event="MEMORY_LOW"}[$__rate_interval]))'), '{{node}}'),
            ],
            'none',
            bars=true,
            decimals=0,
          ),
          g.timeseries(
            'Hyperindexes unloaded and loaded',
            'HYPER_INDEX_UNLOADED and HYPER_INDEX_LOADED events per node (bars).',
            [
              g.range('A', q('sum by (cluster, node, event) (increase(indexima_events_total{%(node)s, event=~"HYPER_INDEX_UNLOADED|HYPER_INDEX_LOADED"}[$__rate_interval]))'), '{{node}} {{event}}'),
            ],
            'none',
            bars=true,
            decimals=0,
          ),
          g.row('Tables and hyperindexes'),
          g.timeseries(
            'Hyperindexes loaded per node',
            'Hyperindexes loaded (indexima_hyperindex_loaded == 1) per node.',
            [
              g.range('A', q('sum by (cluster, node) (indexima_hyperindex_loaded{%(node)s})'), '{{node}}'),
            ],
            'none',
            w=8,
            decimals=0,
          ),
          g.timeseries(
            'Hyperindexes unloaded per node',
            'Hyperindexes unloaded (indexima_hyperindex_loaded == 0) per node; non-zero after MEMORY_LOW until they are loaded again.',
            [
              g.range('A', q('sum by (cluster, node) (1 - indexima_hyperindex_loaded{%(node)s})'), '{{node}}'),
            ],
            'none',
            w=8,
            decimals=0,
          ),
          g.timeseries(
            'Tables loaded per node',
            'Tables loaded since the latest CLUSTER_START (indexima_table_loaded), per node.',
            [
              g.range('A', q('count by (cluster, node) (indexima_table_loaded{%(node)s})'), '{{node}}'),
            ],
            'none',
            w=8,
            decimals=0,
          ),
          g.tablePanel(
            'Hyperindexes',
            'Every hyperindex the exporter tracks, with its state on each node.',
            [
              g.table('A', q('max by (cluster, node, index) (indexima_hyperindex_loaded{%(node)s})')),
            ],
            [g.organize(['Time'], { cluster: 'Cluster', node: 'Node', index: 'Hyperindex', Value: 'State' })],
            w=12,
            cellType='color-text',
            mappings=g.valueMap([['0', 'unloaded', 'orange'], ['1', 'loaded', 'green']]),
          ),
          g.stat(
            'Indexes loaded by the latest preload',
            'Number of indexes loaded by the latest preload (PRELOAD_FINISHED comment), per node.',
            [
              g.instant('A', q('max by (cluster, node) (indexima_preload_indexes_loaded{%(node)s})'), '{{node}}'),
            ],
            w=6,
            h=8,
          ),
          g.timeseries(
            'Metadata tables upgraded',
            'Tables upgraded by SAVE_METADATA events per node (bars).',
            [
              g.range('A', q('sum by (cluster, node) (increase(indexima_metadata_tables_upgraded_total{%(node)s}[$__rate_interval]))'), '{{node}}'),
            ],
            'none',
            w=6,
            bars=true,
            decimals=0,
          ),
          g.row('Timing'),
          g.tablePanel(
            'Latest event by type',
            'Start time of the latest completed event of each type on each node (indexima_event_last_timestamp_seconds).',
            [
              g.table('A', q('max by (cluster, node, event) (indexima_event_last_timestamp_seconds{%(node)s}) * 1000')),
            ],
            [g.organize(['Time'], { cluster: 'Cluster', node: 'Node', event: 'Event', Value: 'Latest start' })],
            w=12,
            h=9,
            unit='dateTimeAsIso',
          ),
          g.timeseries(
            'Event duration p90 by type',
            '90th percentile of event durations by type (indexima_event_duration_seconds), over the rate interval; empty between events.',
            [
              g.range('A', q(|||-
                histogram_quantile(0.9,
                  sum by (le, event) (rate(indexima_event_duration_seconds_bucket{%(node)s}[$__rate_interval]))
                  or
                  sum by (event) (rate(indexima_event_duration_seconds{%(node)s}[$__rate_interval]))
                )
              |||), '{{event}}'),
            ],
            's',
            h=9,
          ),
          g.timeseries(
            'Mean event duration by type',
            'Mean duration of the events completed in the interval, by type.',
            [
              g.range('A', q(|||-
                (
                  sum by (event) (rate(indexima_event_duration_seconds_sum{%(node)s}[$__rate_interval]))
                /
                  sum by (event) (rate(indexima_event_duration_seconds_count{%(node)s}[$__rate_interval]))
                )
                or
                (
                  sum by (event) (histogram_sum(rate(indexima_event_duration_seconds{%(node)s}[$__rate_interval])))
                /
                  sum by (event) (histogram_count(rate(indexima_event_duration_seconds{%(node)s}[$__rate_interval])))
                )
              |||), '{{event}}'),
            ],
            's',
          ),
          g.timeseries(
            'Event duration quantiles (all types)',
            '50th, 90th and 99th percentiles of event durations over all selected types and nodes.',
            [
              g.range('A', q(|||-
                histogram_quantile(0.5,
                  sum by (le) (rate(indexima_event_duration_seconds_bucket{%(node)s}[$__rate_interval]))
                  or
                  sum(rate(indexima_event_duration_seconds{%(node)s}[$__rate_interval]))
                )
              |||), 'p50'),
              g.range('B', q(|||-
                histogram_quantile(0.9,
                  sum by (le) (rate(indexima_event_duration_seconds_bucket{%(node)s}[$__rate_interval]))
                  or
                  sum(rate(indexima_event_duration_seconds{%(node)s}[$__rate_interval]))
                )
              |||), 'p90'),
              g.range('C', q(|||-
                histogram_quantile(0.99,
                  sum by (le) (rate(indexima_event_duration_seconds_bucket{%(node)s}[$__rate_interval]))
                  or
                  sum(rate(indexima_event_duration_seconds{%(node)s}[$__rate_interval]))
                )
              |||), 'p99'),
            ],
            's',
          ),

        ],
      ),
  },
}
