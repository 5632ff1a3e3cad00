// The Grafana dashboards, by file name. dashboards/*.json are their
// rendering with the default _config (make mixin).
(import 'overview.libsonnet') +
(import 'exporter.libsonnet') +
(import 'events.libsonnet')
