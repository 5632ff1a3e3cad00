// The shipped files, rendered from the mixin with its default _config:
//   jsonnet -S -m OUT mixin/render.jsonnet      (scripts/render-mixin.sh, make mixin)
// Each field is a path under the repository root and the file's text.
local rulefile = import 'lib/rulefile.libsonnet';
local mixin = import 'mixin.libsonnet';

{
  'deploy/prometheus/rules/indexima-alerts.yml': rulefile.render(mixin.alertsHeader, mixin.prometheusAlerts),
} + {
  ['dashboards/' + name]: std.manifestJsonEx(mixin.grafanaDashboards[name], '  ') + '\n'
  for name in std.objectFields(mixin.grafanaDashboards)
}
