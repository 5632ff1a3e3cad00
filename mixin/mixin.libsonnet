// The monitoring mixin of indexima_exporter: its alerts and dashboards as
// jsonnet, for kube-prometheus and other mixin users (see README.md).
// _config (config.libsonnet) holds what a user may change; with the defaults
// it renders exactly the shipped rule file and dashboards (make mixin).
(import 'config.libsonnet') +
(import 'alerts.libsonnet') +
(import 'dashboards/dashboards.libsonnet')
