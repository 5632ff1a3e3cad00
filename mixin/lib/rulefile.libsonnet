// Renders prometheusAlerts as the shipped rule file: a Prometheus rule file in
// the conventional field order (alert, expr, for, labels, annotations), with
// the explanations of the rules as YAML comments. std.manifestYamlDoc would
// sort the fields and drop the comments; Prometheus and the Operator read
// the same data either way.
//
// A rule may carry hidden fields that only this renderer reads:
//   comment:: 'text'       comment lines printed after its `- alert:` line
//   forComment:: 'text'    comment lines printed before its `for:`
local lines(s) = std.split(std.rstripChars(s, '\n'), '\n');

local comment(text, indent) =
  [indent + (if l == '' then '#' else '# ' + l) for l in lines(text)];

// A plain (unquoted) scalar when YAML reads it back as the same string,
// else a double-quoted one (JSON's escaping is valid YAML).
local scalar(s) =
  local bad = std.length(s) == 0
              || std.member('-?:,[]{}#&*!|>\'"%@` ', s[0])
              || std.member(' ', s[std.length(s) - 1])
              || std.length(std.findSubstr(': ', s)) > 0
              || std.length(std.findSubstr(' #', s)) > 0
              || std.length(std.findSubstr('\n', s)) > 0
              || std.member(['true', 'false', 'null', 'yes', 'no', 'on', 'off', '~'], std.asciiLower(s));
  if bad then std.escapeStringJson(s) else s;

// Greedy wrapping of words into lines of at most width characters; a
// template action ({{ ... }}) is one word, never split across lines.
local count(s, sub) = std.length(std.findSubstr(sub, s));
local wrap(text, width) =
  local joinActions(acc, w) =
    if std.length(acc) > 0 && count(acc[std.length(acc) - 1], '{{') > count(acc[std.length(acc) - 1], '}}')
    then acc[:std.length(acc) - 1] + [acc[std.length(acc) - 1] + ' ' + w]
    else acc + [w];
  local words = std.foldl(joinActions, std.filter(function(w) w != '', std.split(text, ' ')), []);
  local step(acc, w) =
    if acc.cur == '' then acc { cur: w }
    else if std.length(acc.cur) + 1 + std.length(w) <= width then acc { cur: acc.cur + ' ' + w }
    else acc { done+: [acc.cur], cur: w };
  local r = std.foldl(step, words, { done: [], cur: '' });
  r.done + (if r.cur == '' then [] else [r.cur]);

// key: value at indent; multi-line values as a literal block (|), and
// descriptions folded (>-) at 80 columns of text.
local field(indent, key, value, fold=false) =
  if std.length(std.findSubstr('\n', value)) > 0 then
    assert std.endsWith(value, '\n') && !std.endsWith(value, '\n\n') : '%s: a multi-line value ends with exactly one newline' % key;
    [indent + key + ': |'] + [if l == '' then '' else indent + '  ' + l for l in lines(value)]
  else if fold then
    assert std.length(std.findSubstr('  ', value)) == 0 && value == std.stripChars(value, ' ') : '%s: folded text has single spaces only' % key;
    [indent + key + ': >-'] + [indent + '  ' + l for l in wrap(value, 80)]
  else
    [indent + key + ': ' + scalar(value)];

// Annotations in the order people read them; other keys sorted after.
local order = ['summary', 'description', 'runbook_url'];
local keys(obj) =
  [k for k in order if std.objectHas(obj, k)]
  + [k for k in std.objectFields(obj) if !std.member(order, k)];

local mapping(indent, key, obj) =
  [indent + key + ':'] + std.flattenArrays([field(indent + '  ', k, obj[k], fold=k == 'description') for k in keys(obj)]);

local rule(r) =
  local i = '        ';
  local known = ['alert', 'expr', 'for', 'labels', 'annotations'];
  assert std.all([std.member(known, k) for k in std.objectFields(r)]) : 'rule %s: fields other than %s' % [r.alert, known];
  ['      - alert: ' + scalar(r.alert)]
  + (if std.objectHasAll(r, 'comment') then comment(r.comment, i) else [])
  + field(i, 'expr', r.expr)
  + (if std.objectHasAll(r, 'forComment') then comment(r.forComment, i) else [])
  + (if std.objectHas(r, 'for') then field(i, 'for', r['for']) else [])
  + (if std.objectHas(r, 'labels') then mapping(i, 'labels', r.labels) else [])
  + (if std.objectHas(r, 'annotations') then mapping(i, 'annotations', r.annotations) else []);

local group(g) =
  ['  - name: ' + scalar(g.name), '    rules:']
  + std.join([''], [rule(r) for r in g.rules]);

{
  // render(header, alerts) is the text of the rule file: header as comment
  // lines, then alerts.groups.
  render(header, alerts)::
    std.join('\n', comment(header, '') + ['groups:'] + std.join([''], [group(g) for g in alerts.groups])) + '\n',
}
