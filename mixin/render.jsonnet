// The shipped files, rendered from the mixin with its default _config:
//   jsonnet -S -m OUT mixin/render.jsonnet      (scripts/render-mixin.sh, make mixin)
// Each field is a path under the repository root and the file's text.
local rulefile = import 'lib/rulefile.libsonnet';
local mixin = import 'mixin.libsonnet';
local rules = rulefile.render(mixin.alertsHeader, mixin.prometheusAlerts);

{
  'deploy/prometheus/rules/indexima-alerts.yml': rules,
  // The Helm chart's copy, from which its PrometheusRule is made: a chart
  // holds no symbolic link (Helm warns at every command), and a copy written
  // by hand could drift.
  'deploy/helm/indexima-exporter/rules/indexima-alerts.yml': rules,
} + {
  ['dashboards/' + name]: std.manifestJsonEx(mixin.grafanaDashboards[name], '  ') + '\n'
  for name in std.objectFields(mixin.grafanaDashboards)
}
