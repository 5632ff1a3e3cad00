local g = import '../lib/grafana.libsonnet';
local util = import '../lib/util.libsonnet';

{
  grafanaDashboards+:: {
    'indexima-exporter.json':
      local c = $._config;
      // As on the overview: every query selects the exporter's series and
      // the dashboard's variables.
      local selectors = util.dashboardSelectors(c.indeximaSelector);
      local q(expr) = expr % selectors;
      g.dashboard(
        uid='indexima-exporter',
        title=c.dashboardTitlePrefix + 'Exporter',
        description='Health of indexima_exporter itself: scrapes, sub-collectors, console API calls, logins, event accounting, process.',
        tags=c.exporterDashboardTags,
        links=[g.link('Indexima overview', c.dashboardTags[0])],
        refresh=c.dashboardRefresh,
        timeFrom=c.dashboardTimeFrom,
        timezone=c.dashboardTimezone,
        variables=[
          g.queryVariable('job', 'Job', util.selector('indexima_exporter_collector_success', [c.indeximaSelector]), '.+'),
          g.queryVariable('instance', 'Instance', q('indexima_exporter_collector_success{%(job)s}'), '.+'),
          g.queryVariable('cluster',
                          'Cluster',
                          q('indexima_console_up{%(exporter)s}'),
                          '.*',
                          description='Exists only when the exporter monitors several clusters; All matches series without the label too.'),
          g.queryVariable('node', 'Node', q('indexima_up{%(cluster)s}'), '.*'),
        ],
        panels=[
          g.row('Scrapes'),
          g.stat(
            'Exporter up',
            "Prometheus's view: 1 if the latest scrape of the exporter succeeded (up).",
            [
              g.instant('A', q('up{%(exporter)s}'), '{{instance}}'),
            ],
            w=6,
            unit='short',
            thresholds=[['red', null], ['green', 1]],
            mappings=g.valueMap([['0', 'down', 'red'], ['1', 'up', 'green']]),
            colorMode='background',
          ),
          g.stat(
            'Console up',
            '1 if the console answered the latest scrape (indexima_console_up), per cluster.',
            [
              g.instant('A', q('min by (instance, cluster) (indexima_console_up{%(cluster)s})'), '{{instance}} {{cluster}}'),
            ],
            w=6,
            unit='short',
            thresholds=[['red', null], ['green', 1]],
            mappings=g.valueMap([['0', 'down', 'red'], ['1', 'up', 'green']]),
            colorMode='background',
          ),
          g.tablePanel(
            'Build',
            'Version of the exporter (indexima_exporter_build_info).',
            [
              g.table('A', q('max by (instance, version, revision, branch, goversion) (indexima_exporter_build_info{%(exporter)s})')),
            ],
            [g.organize(['Time', 'Value'], { instance: 'Exporter', version: 'Version', revision: 'Revision', branch: 'Branch', goversion: 'Go' })],
            w=12,
            h=4,
          ),
          g.stateTimeline(
            'Sub-collector success',
            'indexima_exporter_collector_success per sub-collector: green when it produced its metrics for every node on the scrape.',
            [
              g.range('A', q('min by (instance, collector) (indexima_exporter_collector_success{%(exporter)s})'), '{{instance}} {{collector}}'),
            ],
            g.valueMap([['0', 'failed', 'red'], ['1', 'ok', 'green']]),
            [['red', null], ['green', 1]],
          ),
          g.timeseries(
            'Sub-collector duration',
            'Time spent by each sub-collector on a scrape (indexima_exporter_collector_duration_seconds).',
            [
              g.range('A', q('max by (instance, collector) (indexima_exporter_collector_duration_seconds{%(exporter)s})'), '{{instance}} {{collector}}'),
            ],
            's',
          ),
          g.timeseries(
            'Scrape duration',
            "How long Prometheus's scrapes of the exporter take (scrape_duration_seconds); keep it well below the scrape timeout.",
            [
              g.range('A', q('scrape_duration_seconds{%(exporter)s}'), '{{instance}}'),
            ],
            's',
          ),
          g.timeseries(
            'Node poll duration',
            'Duration of the latest poll of each node (indexima_exporter_node_poll_duration_seconds): event listings, count, paging and info calls.',
            [
              g.range('A', q('max by (cluster, node) (indexima_exporter_node_poll_duration_seconds{%(node)s})'), '{{node}}'),
            ],
            's',
          ),
          g.row('Console API'),
          g.timeseries(
            'API requests by endpoint and code',
            'Calls to the console API per second (indexima_exporter_api_requests_total); code "error" means no HTTP answer.',
            [
              g.range('A', q('sum by (endpoint, code) (rate(indexima_exporter_api_requests_total{%(exporter)s}[$__rate_interval]))'), '{{endpoint}} {{code}}'),
            ],
            'reqps',
            stack=true,
          ),
          g.timeseries(
            'API error ratio by endpoint',
            'Share of console calls that did not get a 2xx answer, by endpoint.',
            [
              g.range('A', q(|||-
                (
                    sum by (endpoint) (rate(indexima_exporter_api_requests_total{%(exporter)s, code!~"2.."}[$__rate_interval]))
                  or
                    sum by (endpoint) (rate(indexima_exporter_api_requests_total{%(exporter)s}[$__rate_interval])) * 0
                )
                /
                sum by (endpoint) (rate(indexima_exporter_api_requests_total{%(exporter)s}[$__rate_interval]))
              |||), '{{endpoint}}'),
            ],
            'percentunit',
          ),
          g.timeseries(
            'API latency p90 by endpoint',
            '90th percentile of console call durations (indexima_exporter_api_request_duration_seconds), by endpoint.',
            [
              g.range('A', q(|||-
                histogram_quantile(0.9,
                  sum by (le, endpoint) (rate(indexima_exporter_api_request_duration_seconds_bucket{%(exporter)s}[$__rate_interval]))
                  or
                  sum by (endpoint) (rate(indexima_exporter_api_request_duration_seconds{%(exporter)s}[$__rate_interval]))
                )
              |||), '{{endpoint}}'),
            ],
            's',
          ),
          g.timeseries(
            'API latency mean by endpoint',
            'Mean duration of console calls, by endpoint.',
            [
              g.range('A', q(|||-
                (
                  sum by (endpoint) (rate(indexima_exporter_api_request_duration_seconds_sum{%(exporter)s}[$__rate_interval]))
                /
                  sum by (endpoint) (rate(indexima_exporter_api_request_duration_seconds_count{%(exporter)s}[$__rate_interval]))
                )
                or
                (
                  sum by (endpoint) (histogram_sum(rate(indexima_exporter_api_request_duration_seconds{%(exporter)s}[$__rate_interval])))
                /
                  sum by (endpoint) (histogram_count(rate(indexima_exporter_api_request_duration_seconds{%(exporter)s}[$__rate_interval])))
                )
              |||), '{{endpoint}}'),
            ],
            's',
          ),
          g.timeseries(
            'Logins by result',
            'Logins to the console (indexima_exporter_logins_total): success, failure (credentials refused), error (no usable answer).',
            [
              g.range('A', q('sum by (result) (increase(indexima_exporter_logins_total{%(exporter)s}[$__rate_interval]))'), '{{result}}'),
            ],
            'none',
            bars=true,
            decimals=0,
          ),
          g.stateTimeline(
            'Console up',
            'indexima_console_up per cluster over time.',
            [
              g.range('A', q('min by (instance, cluster) (indexima_console_up{%(cluster)s})'), '{{instance}} {{cluster}}'),
            ],
            g.valueMap([['0', 'down', 'red'], ['1', 'up', 'green']]),
            [['red', null], ['green', 1]],
          ),
          g.row('Event accounting'),
          g.timeseries(
            'Events reported minus counted',
            'Per node, events the console reported (event/count, indexima_events_reported_total) minus events the exporter counted (indexima_events_total), since the exporter started. Above 0 and growing: events are missed. Briefly above 0 while events run.',
            [
              g.range('A', q(|||-
                indexima_events_reported_total{%(node)s}
                -
                sum without (event) (indexima_events_total{%(node)s})
              |||), '{{node}}'),
            ],
            'none',
            min=null,
            decimals=0,
          ),
          g.timeseries(
            'Cursor age',
            "How far behind now the node's event cursor is (time() - indexima_events_cursor_timestamp_seconds): grows when polls fail or the node's clock drifts.",
            [
              g.range('A', q('time() - max by (cluster, node) (indexima_events_cursor_timestamp_seconds{%(node)s})'), '{{node}}'),
            ],
            's',
            min=null,
          ),
          g.timeseries(
            'Label values dropped',
            'Events whose table, index or down-node label value was dropped because the node reached the bound of distinct values (indexima_exporter_label_values_dropped_total), since the exporter started; 0 when none.',
            [
              g.range('A', q(|||-
                sum by (cluster, node, label) (indexima_exporter_label_values_dropped_total{%(node)s})
                or on (cluster, node)
                max by (cluster, node) (indexima_up{%(node)s}) * 0
              |||), '{{node}} {{label}}'),
            ],
            'none',
            decimals=0,
          ),
          g.row('Process'),
          g.timeseries(
            'CPU',
            'CPU used by the exporter process (rate of process_cpu_seconds_total).',
            [
              g.range('A', q('rate(process_cpu_seconds_total{%(exporter)s}[$__rate_interval])'), '{{instance}}'),
            ],
            'percentunit',
            w=8,
          ),
          g.timeseries(
            'Memory',
            'Resident memory of the exporter process and Go heap in use.',
            [
              g.range('A', q('process_resident_memory_bytes{%(exporter)s}'), '{{instance}} resident'),
              g.range('B', q('go_memstats_heap_inuse_bytes{%(exporter)s}'), '{{instance}} heap in use'),
            ],
            'bytes',
            w=8,
          ),
          g.timeseries(
            'Goroutines and open files',
            'Goroutines (go_goroutines) and open file descriptors (process_open_fds) of the exporter; steady growth means a leak.',
            [
              g.range('A', q('go_goroutines{%(exporter)s}'), '{{instance}} goroutines'),
              g.range('B', q('process_open_fds{%(exporter)s}'), '{{instance}} open fds'),
            ],
            'none',
            w=8,
          ),

        ],
      ),
  },
}
