// Small helpers of the mixin: PromQL selectors and durations in words.
{
  // selector('indexima_up', ['job="x"', 'event="NODE_DOWN"']) is
  // 'indexima_up{job="x", event="NODE_DOWN"}'; empty matchers are left out,
  // and so are the braces when none is left.
  selector(metric, matchers=[])::
    local m = std.filter(function(s) s != '', matchers);
    if std.length(m) == 0 then metric else metric + '{' + std.join(', ', m) + '}',

  // humanDuration('5m') is '5 minutes', humanDuration('1h') '1 hour': the
  // durations the alerts' descriptions quote.
  humanDuration(d)::
    local units = { s: 'second', m: 'minute', h: 'hour', d: 'day' };
    local unit = std.substr(d, std.length(d) - 1, 1);
    local n = std.parseInt(std.substr(d, 0, std.length(d) - 1));
    assert std.objectHas(units, unit) : 'duration %s: want a number and one of s, m, h, d' % d;
    '%d %s%s' % [n, units[unit], if n == 1 then '' else 's'],

  // seconds('5m') is 300: a window as the number of seconds a rule
  // compares an age with.
  seconds(d)::
    local unit = std.substr(d, std.length(d) - 1, 1);
    local n = std.parseInt(std.substr(d, 0, std.length(d) - 1));
    local per = { s: 1, m: 60, h: 3600, d: 86400 };
    assert std.objectHas(per, unit) : 'duration %s: want a number and one of s, m, h, d' % d;
    n * per[unit],

  // The matchers of the dashboards' queries, by the variables they select
  // on, each after the exporter's own selector (_config.indeximaSelector):
  // `indexima_up{%(node)s}` % dashboardSelectors('') is
  // 'indexima_up{job=~"$job", instance=~"$instance", cluster=~"$cluster", node=~"$node"}'.
  // Variables go in regular-expression matchers, so that All (.* or .+)
  // and a missing cluster label match.
  dashboardSelectors(indeximaSelector)::
    local sel(ms) = std.join(', ', std.filter(function(s) s != '', [indeximaSelector] + ms));
    {
      job: sel(['job=~"$job"']),
      exporter: sel(['job=~"$job"', 'instance=~"$instance"']),
      cluster: sel(['job=~"$job"', 'instance=~"$instance"', 'cluster=~"$cluster"']),
      node: sel(['job=~"$job"', 'instance=~"$instance"', 'cluster=~"$cluster"', 'node=~"$node"']),
    },
}
