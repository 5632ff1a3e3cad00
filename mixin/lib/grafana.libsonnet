// A small Grafana dashboard builder: the panel kinds the dashboards use, with
// the settings they share, so that each panel below names only what is its
// own. (grafonnet is not vendored: its bundler needs github.com, and these
// few constructors are all the dashboards need.)
local datasource = { type: 'prometheus', uid: '${datasource}' };
// The data source of a dashboard of the event log's lines (Loki): its
// "datasource" variable is one of Loki's.
local lokiDatasource = { type: 'loki', uid: '${datasource}' };

// Threshold steps from [color, value] pairs; the first value is null (base).
local steps(pairs) = {
  mode: 'absolute',
  steps: [{ color: p[0], value: p[1] } for p in pairs],
};

local panel(type, title, description, targets, w, h) = {
  type: type,
  title: title,
  description: description,
  datasource: datasource,
  targets: targets,
  // Placed by dashboard() (flow layout), which also numbers the panels.
  gridPos:: { w: w, h: h },
};

{
  datasource: datasource,
  lokiDatasource: lokiDatasource,

  // Value mappings from [value, text, color] triples, e.g.
  // valueMap([['0', 'down', 'red'], ['1', 'up', 'green']]).
  valueMap(triples):: [{
    type: 'value',
    options: {
      [triples[i][0]]: { text: triples[i][1], color: triples[i][2], index: i }
      for i in std.range(0, std.length(triples) - 1)
    },
  }],

  // Targets. range: a time series over the panel's range; instant: the
  // latest value; table: the latest value as a table (one column per label).
  local target(refId, expr, legend, range, format) = {
    datasource: datasource,
    refId: refId,
    expr: expr,
    legendFormat: legend,
    range: range,
    instant: !range,
    format: format,
    editorMode: 'code',
  },
  range(refId, expr, legend):: target(refId, expr, legend, true, 'time_series'),
  instant(refId, expr, legend):: target(refId, expr, legend, false, 'time_series'),
  table(refId, expr):: target(refId, expr, '__auto', false, 'table'),

  // A LogQL target: lines (a log query) or a metric over a range.
  logql(refId, expr, legend=''):: {
    datasource: lokiDatasource,
    refId: refId,
    expr: expr,
    legendFormat: legend,
    queryType: 'range',
    editorMode: 'code',
  },

  // A panel of log lines (LogQL targets), the newest first.
  logs(title, description, targets, w=24, h=12):: panel('logs', title, description, targets, w, h) {
    datasource: lokiDatasource,
    options: {
      dedupStrategy: 'none',
      enableLogDetails: true,
      prettifyLogMessage: false,
      showCommonLabels: false,
      showLabels: false,
      showTime: true,
      sortOrder: 'Descending',
      wrapLogMessage: true,
    },
  },

  // A query variable of Loki's label values of a stream selector, with All.
  lokiVariable(name, label, stream, description=''):: {
    name: name,
    label: label,
    type: 'query',
    datasource: lokiDatasource,
    definition: 'label_values(%s, %s)' % [stream, name],
    query: { type: 1, label: name, stream: stream, refId: 'LokiVariableQueryEditor-VariableQuery' },
    refresh: 2,  // on time range change
    sort: 1,
    regex: '',
    hide: 0,
    includeAll: true,
    allValue: '.*',
    multi: true,
    current: { selected: true, text: ['All'], value: ['$__all'] },
    options: [],
    skipUrlSync: false,
    description: description,
  },

  // An annotation from a LogQL query: a mark at each line.
  lokiAnnotation(name, expr, title, text, color, tags=[]):: {
    name: name,
    datasource: lokiDatasource,
    enable: true,
    hide: false,
    iconColor: color,
    expr: expr,
    instant: false,
    titleFormat: title,
    textFormat: text,
    tagKeys: std.join(',', tags),
  },

  row(title):: {
    type: 'row',
    title: title,
    collapsed: false,
    panels: [],
    gridPos:: { w: 24, h: 1 },
  },

  stat(title, description, targets, w, h=4, unit='none', thresholds=[['green', null]], mappings=[], colorMode='value', textMode='auto')::
    panel('stat', title, description, targets, w, h) {
      fieldConfig: {
        defaults: { color: { mode: 'thresholds' }, mappings: mappings, thresholds: steps(thresholds), unit: unit },
        overrides: [],
      },
      options: {
        colorMode: colorMode,
        graphMode: 'none',
        justifyMode: 'auto',
        orientation: 'auto',
        reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
        textMode: textMode,
      },
    },

  // bars: one bar per step (event counts); stack: stacked lines; min: the
  // axis minimum (null: none); decimals: null for Grafana's choice.
  timeseries(title, description, targets, unit, w=12, h=8, bars=false, stack=false, min=0, decimals=null)::
    local optional = (if min == null then {} else { min: min })
                     + (if decimals == null then {} else { decimals: decimals });
    panel('timeseries', title, description, targets, w, h) {
      fieldConfig: {
        defaults: optional {
          color: { mode: 'palette-classic' },
          custom: {
            drawStyle: if bars then 'bars' else 'line',
            fillOpacity: if bars then 60 else 10,
            lineWidth: 1,
            showPoints: 'never',
            spanNulls: false,
            stacking: { group: 'A', mode: if stack then 'normal' else 'none' },
          },
          unit: unit,
        },
        overrides: [],
      },
      options: {
        legend: { calcs: [], displayMode: 'list', placement: 'bottom', showLegend: true },
        tooltip: { mode: 'multi', sort: 'desc' },
      },
    },

  // A table of instant queries; transformations rename and hide columns.
  tablePanel(title, description, targets, transformations, w, h=8, unit='short', cellType='auto', mappings=[])::
    panel('table', title, description, targets, w, h) {
      fieldConfig: {
        defaults: {
          custom: { align: 'auto', cellOptions: { type: cellType } },
          mappings: mappings,
          thresholds: steps([['text', null]]),
          unit: unit,
        },
        overrides: [],
      },
      options: {
        cellHeight: 'sm',
        footer: { fields: '', reducer: ['sum'], show: false },
        showHeader: true,
      },
      transformations: transformations,
    },

  // organize: hide columns (names) and rename others ({from: to}).
  organize(exclude, rename):: {
    id: 'organize',
    options: { excludeByName: { [n]: true for n in exclude }, renameByName: rename },
  },

  stateTimeline(title, description, targets, mappings, thresholds, w=12, h=8, color={ mode: 'thresholds' })::
    panel('state-timeline', title, description, targets, w, h) {
      fieldConfig: {
        defaults: {
          color: color,
          custom: { fillOpacity: 80, lineWidth: 0 },
          mappings: mappings,
          thresholds: steps(thresholds),
        },
        overrides: [],
      },
      options: {
        alignValue: 'left',
        legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
        mergeValues: true,
        rowHeight: 0.9,
        showValue: 'never',
        tooltip: { mode: 'single', sort: 'none' },
      },
    },

  // A query variable from label_values(selector, label), with All.
  queryVariable(name, label, selector, allValue, description=''):: {
    local q = 'label_values(%s, %s)' % [selector, name],
    name: name,
    label: label,
    type: 'query',
    datasource: datasource,
    definition: q,
    query: { qryType: 1, query: q, refId: 'PrometheusVariableQueryEditor-VariableQuery' },
    refresh: 2,  // on time range change
    sort: 1,
    regex: '',
    hide: 0,
    includeAll: true,
    allValue: allValue,
    multi: true,
    current: { selected: true, text: ['All'], value: ['$__all'] },
    options: [],
    skipUrlSync: false,
    description: description,
  },

  datasourceVariable(source='prometheus'):: {
    name: 'datasource',
    label: 'Data source',
    type: 'datasource',
    query: source,
    current: {},
    hide: 0,
    refresh: 1,
    regex: '',
    options: [],
    includeAll: false,
    multi: false,
    skipUrlSync: false,
  },

  // An annotation from a Prometheus query: one mark (or region, over
  // consecutive steps) wherever the query has a value.
  annotation(name, expr, title, text, color, tags=[]):: {
    name: name,
    datasource: datasource,
    enable: true,
    hide: false,
    iconColor: color,
    expr: expr,
    step: '',
    titleFormat: title,
    textFormat: text,
    tagKeys: std.join(',', tags),
    useValueForTime: false,
  },

  // Grafana's own annotations and alerts, on every dashboard.
  builtinAnnotation:: {
    builtIn: 1,
    datasource: { type: 'grafana', uid: '-- Grafana --' },
    enable: true,
    hide: true,
    iconColor: 'rgba(0, 211, 255, 1)',
    name: 'Annotations & Alerts',
    type: 'dashboard',
  },

  // dashboard(...) lays the panels out left to right, a new line when the
  // next does not fit in 24 columns (a row is 24 wide), and numbers them
  // from 1 in order.
  // source is the data source of its queries: prometheus, or loki (the
  // event log's lines).
  dashboard(uid, title, description, tags, links, variables, panels, annotations=[], refresh='30s', timeFrom='now-6h', timezone='', source='prometheus'):: {
    local place(acc, p) =
      local g = p.gridPos;
      local newLine = acc.x + g.w > 24;
      local x = if newLine then 0 else acc.x;
      local y = if newLine then acc.y + acc.h else acc.y;
      {
        x: x + g.w,
        y: y,
        h: if newLine then g.h else std.max(acc.h, g.h),
        out: acc.out + [p { id: std.length(acc.out) + 1, gridPos::: { x: x, y: y, w: g.w, h: g.h } }],
      },
    __inputs: [],
    __requires: [
      { type: 'grafana', id: 'grafana', name: 'Grafana', version: '10.4.0' },
      { type: 'datasource', id: source, name: { prometheus: 'Prometheus', loki: 'Loki' }[source], version: '1.0.0' },
    ],
    annotations: { list: [$.builtinAnnotation] + annotations },
    description: description,
    // Provisioned from files: edits in Grafana would be lost at each reload.
    editable: false,
    fiscalYearStartMonth: 0,
    graphTooltip: 1,
    id: null,
    links: links,
    liveNow: false,
    panels: std.foldl(place, panels, { x: 0, y: 0, h: 0, out: [] }).out,
    refresh: refresh,
    schemaVersion: 39,
    tags: tags,
    templating: { list: [$.datasourceVariable(source)] + variables },
    time: { from: timeFrom, to: 'now' },
    timepicker: {},
    timezone: timezone,
    title: title,
    uid: uid,
    version: 1,
    weekStart: '',
  },

  // A link to the dashboards with a tag, keeping time and variables.
  link(title, tag):: {
    title: title,
    type: 'dashboards',
    tags: [tag],
    asDropdown: false,
    includeVars: true,
    keepTime: true,
    icon: 'external link',
    targetBlank: false,
    url: '',
    tooltip: '',
  },
}
