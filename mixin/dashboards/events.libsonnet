local g = import '../lib/grafana.libsonnet';

// The events themselves, from the event log (--events.log, docs/events.md)
// shipped to Loki by deploy/logging/ (Grafana Alloy or Vector): each line
// an event, labelled job, cluster, node and type.
{
  grafanaDashboards+:: {
    'indexima-events.json':
      local c = $._config;
      local stream = '{%s}' % c.eventLogSelector;
      // The lines of the selected clusters, nodes and types. All is .*,
      // which also matches lines without the label (a single cluster has
      // no cluster label).
      local selected(extra='') =
        '{%s, cluster=~"$cluster", node=~"$node", type=~"$type"%s}' % [c.eventLogSelector, extra];
      g.dashboard(
        uid='indexima-events',
        title=c.dashboardTitlePrefix + 'Events',
        description='Every event indexima_exporter counted, from its event log in Loki: what happened on each node, in order.',
        tags=c.dashboardTags,
        links=[g.link('Indexima', c.dashboardTags[0])],
        refresh=c.dashboardRefresh,
        timeFrom=c.dashboardTimeFrom,
        timezone=c.dashboardTimezone,
        source='loki',
        annotations=[
          g.lokiAnnotation(
            'Cluster stops, starts and NODE_DOWN reports',
            selected(', type=~"CLUSTER_STOP|CLUSTER_START|NODE_DOWN"') + ' | json',
            title='{{type}} on {{node}}',
            text='{{comment}}',
            color='red',
            tags=['cluster', 'node', 'type'],
          ),
        ],
        variables=[
          g.lokiVariable('cluster', 'Cluster', stream, description='Exists only when the exporter monitors several clusters; All matches lines without the label too.'),
          g.lokiVariable('node', 'Node', stream),
          g.lokiVariable('type', 'Type', stream),
        ],
        panels=[
          g.timeseries(
            'Events by type',
            'Events counted per interval, by type (lines of the event log).',
            [
              g.logql('A', 'sum by (type) (count_over_time(%s [$__auto]))' % selected(), '{{type}}'),
            ],
            'short',
            w=16,
            h=8,
            bars=true,
            stack=true,
            decimals=0,
          ) { datasource: g.lokiDatasource },
          g.timeseries(
            'NODE_DOWN reports by reporting node',
            'NODE_DOWN events per node that logged them (which node was down: the lines below).',
            [
              g.logql('A', 'sum by (node) (count_over_time(%s [$__auto]))' % selected(', type="NODE_DOWN"'), '{{node}}'),
            ],
            'short',
            w=8,
            h=8,
            bars=true,
            decimals=0,
          ) { datasource: g.lokiDatasource },
          g.logs(
            'Events',
            "Each event as the node logged it, the newest first: its start (the node's clock), node, type, duration and comment; the line's fields are under each line.",
            [
              g.logql('A', selected() + ' | json | line_format "{{.date}} {{.node}} {{.type}} {{.duration_ms}}ms {{.comment}}"'),
            ],
            h=14,
          ),
          g.logs(
            'NODE_DOWN reports',
            'Which node each NODE_DOWN event reported down: its name, as the alerts and metrics give it, and its number.',
            [
              g.logql('A', selected(', type="NODE_DOWN"') + ' | json | line_format "{{.node}} reported node {{.down_node}}{{with .down_node_number}} (number {{.}}){{end}} down"'),
            ],
            h=8,
          ),
        ],
      ),
  },
}
