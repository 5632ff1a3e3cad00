package deploy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grafana/alloy/syntax/ast"
	"github.com/grafana/alloy/syntax/parser"
	"github.com/grafana/alloy/syntax/vm"
	yaml "go.yaml.in/yaml/v3"

	"github.com/indexima-exporter/indexima_exporter/dashboards"
	"github.com/indexima-exporter/indexima_exporter/event"
	"github.com/indexima-exporter/indexima_exporter/eventlog"
	"github.com/indexima-exporter/indexima_exporter/poller"
	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// The shipped log pipelines read the path docs/events.md gives to
// --events.log and label the stream as the events dashboard selects it.
const (
	eventLogPath = "/var/log/indexima_exporter/events.log"
	eventLogJob  = "indexima-events"
)

// eventLine is a line of the event log as the exporter writes it (a
// NODE_DOWN, which has every field), decoded as a shipper does.
func eventLine(t *testing.T) map[string]any {
	t.Helper()
	c := tracker.CountedEvent{Event: event.Event{Type: "NODE_DOWN", Date: time.Date(2026, 3, 10, 12, 0, 0, 7e6, time.UTC).UnixMilli(),
		Duration: 3, HasDuration: true, Comment: "2"}, Nth: 1, DownNode: "core-2"}
	b, err := json.Marshal(eventlog.LineOf(poller.NodeRef{Cluster: "prod", Name: "core-1", Target: "core-1:9999"}, c))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// block is a component of an Alloy configuration: its name
// (loki.source.file), label and body.
type block struct {
	name, label string
	body        ast.Body
}

func alloyBlocks(body ast.Body) []block {
	var out []block
	for _, s := range body {
		if b, ok := s.(*ast.BlockStmt); ok {
			out = append(out, block{name: strings.Join(b.Name, "."), label: b.Label, body: b.Body})
		}
	}
	return out
}

// attr evaluates a literal attribute of a block into v (false when absent).
func attr(t *testing.T, body ast.Body, name string, v any) bool {
	t.Helper()
	for _, s := range body {
		if a, ok := s.(*ast.AttributeStmt); ok && a.Name.Name == name {
			if err := vm.New(a.Value).Evaluate(nil, v); err != nil {
				t.Fatalf("attribute %s: %v", name, err)
			}
			return true
		}
	}
	return false
}

// references lists the component references (a.b.label.export) of a body.
var reference = regexp.MustCompile(`\b([a-z_]+(?:\.[a-z_]+)+)\.([a-z_]+)\.(receiver|targets)\b`)

// The Alloy pipeline parses with Alloy's own parser, its components are
// wired to components it declares, it reads the event log's path, and it
// takes from the exporter's lines the labels (cluster, node, type) and the
// time (date, in a format that reads it) that docs/events.md and the events
// dashboard use.
func TestAlloyPipelineReadsTheEventLog(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("logging", "events.alloy"))
	if err != nil {
		t.Fatal(err)
	}
	file, err := parser.ParseFile("events.alloy", src)
	if err != nil {
		t.Fatalf("events.alloy does not parse: %v", err)
	}
	blocks := alloyBlocks(file.Body)
	declared := map[string]block{}
	for _, b := range blocks {
		declared[b.name+"."+b.label] = b
	}
	for _, m := range reference.FindAllStringSubmatch(string(src), -1) {
		if _, ok := declared[m[1]+"."+m[2]]; !ok && !strings.HasPrefix(m[1], "//") {
			t.Errorf("events.alloy refers to %s.%s, which it does not declare", m[1], m[2])
		}
	}

	match, ok := declared["local.file_match.indexima_events"]
	var targets []map[string]string
	if !ok || !attr(t, match.body, "path_targets", &targets) || len(targets) != 1 {
		t.Fatalf("no local.file_match \"indexima_events\" with one path target")
	}
	if targets[0]["__path__"] != eventLogPath || targets[0]["job"] != eventLogJob {
		t.Errorf("path target %v: want __path__ %s and job %s", targets[0], eventLogPath, eventLogJob)
	}

	line := eventLine(t)
	process, ok := declared["loki.process.indexima_events"]
	if !ok {
		t.Fatal("no loki.process \"indexima_events\"")
	}
	extracted := map[string]bool{}
	var labels []string
	var tsSource, tsFormat string
	for _, st := range alloyBlocks(process.body) {
		switch st.name {
		case "stage.json":
			var exprs map[string]string
			attr(t, st.body, "expressions", &exprs)
			for name, path := range exprs {
				field := path
				if field == "" {
					field = name
				}
				if _, ok := line[field]; !ok {
					t.Errorf("stage.json extracts %q, which the exporter's lines do not have (%v)", field, line)
				}
				extracted[name] = true
			}
		case "stage.labels":
			var values map[string]string
			attr(t, st.body, "values", &values)
			for name := range values {
				labels = append(labels, name)
			}
		case "stage.timestamp":
			attr(t, st.body, "source", &tsSource)
			attr(t, st.body, "format", &tsFormat)
		}
	}
	slices.Sort(labels)
	if strings.Join(labels, ",") != "cluster,node,type" {
		t.Errorf("labels %v, want cluster, node and type", labels)
	}
	for _, l := range append(labels, tsSource) {
		if !extracted[l] {
			t.Errorf("%q is used but stage.json does not extract it", l)
		}
	}
	// Alloy reads a format named after a Go layout with that layout.
	if tsSource != "date" || tsFormat != "RFC3339Nano" {
		t.Fatalf("stage.timestamp source %q format %q, want date in RFC3339Nano", tsSource, tsFormat)
	}
	if ts, err := time.Parse(time.RFC3339Nano, line["date"].(string)); err != nil || ts.UnixMilli() != int64(line["date_ms"].(float64)) {
		t.Errorf("date %v does not read as RFC3339Nano: %v", line["date"], err)
	}
	checkDashboardStream(t)
}

// The Vector pipeline reads the event log's path, parses the lines, drops
// the copies of an id, dates the entries by the event and labels them as
// the Alloy one does.
func TestVectorPipelineReadsTheEventLog(t *testing.T) {
	var cfg struct {
		Sources    map[string]map[string]any `yaml:"sources"`
		Transforms map[string]map[string]any `yaml:"transforms"`
		Sinks      map[string]struct {
			Type   string            `yaml:"type"`
			Inputs []string          `yaml:"inputs"`
			Labels map[string]string `yaml:"labels"`
		} `yaml:"sinks"`
	}
	readYAML(t, filepath.Join("logging", "vector.yaml"), &cfg)
	src := cfg.Sources["indexima_events"]
	if src["type"] != "file" || !slices.Contains(toStrings(src["include"]), eventLogPath) {
		t.Errorf("source %v: want a file source of %s", src, eventLogPath)
	}
	line := eventLine(t)
	parsed := cfg.Transforms["indexima_events_parsed"]
	vrl, _ := parsed["source"].(string)
	if parsed["type"] != "remap" || !strings.Contains(vrl, "parse_json!") || !strings.Contains(vrl, "parse_timestamp!(.date") {
		t.Errorf("transform indexima_events_parsed %v: want a remap parsing the line and dating it by .date", parsed)
	}
	once := cfg.Transforms["indexima_events_once"]
	fields, _ := once["fields"].(map[string]any)
	if once["type"] != "dedupe" || strings.Join(toStrings(fields["match"]), ",") != "id" || !slices.Contains(toStrings(once["inputs"]), "indexima_events_parsed") {
		t.Errorf("transform indexima_events_once %v: want a dedupe on id after the parse", once)
	}
	if _, ok := line["id"]; !ok {
		t.Error("the exporter's lines have no id")
	}
	sink, ok := cfg.Sinks["loki"]
	if !ok || sink.Type != "loki" || !slices.Equal(sink.Inputs, []string{"indexima_events_once"}) {
		t.Fatalf("sink loki %+v: want a loki sink of the deduplicated events", sink)
	}
	template := regexp.MustCompile(`^\{\{ ([a-z_]+) \}\}$`)
	var labels []string
	for name, v := range sink.Labels {
		if name == "job" {
			if v != eventLogJob {
				t.Errorf("label job %q, want %s", v, eventLogJob)
			}
			continue
		}
		m := template.FindStringSubmatch(v)
		if m == nil || m[1] != name {
			t.Errorf("label %s = %q, want {{ %s }}", name, v, name)
			continue
		}
		if _, ok := line[m[1]]; !ok {
			t.Errorf("label %s takes field %q, which the exporter's lines do not have", name, m[1])
		}
		labels = append(labels, name)
	}
	slices.Sort(labels)
	if strings.Join(labels, ",") != "cluster,node,type" {
		t.Errorf("labels %v, want cluster, node and type (and job)", labels)
	}
}

// checkDashboardStream: the events dashboard selects the stream the
// pipelines label, by the labels they set.
func checkDashboardStream(t *testing.T) {
	t.Helper()
	ds, err := dashboards.Load(dashboards.Files)
	if err != nil {
		t.Fatal(err)
	}
	matcher := regexp.MustCompile(`([a-z_]+)\s*(=~|!~|!=|=)\s*"`)
	n := 0
	for _, d := range ds {
		for _, q := range d.LogQueries() {
			n++
			_, rest, ok := strings.Cut(q.Expr, "{")
			if !ok {
				t.Errorf("%s %s: %q has no stream selector", q.Dashboard, q.Where, q.Expr)
				continue
			}
			sel, _, _ := strings.Cut(rest, "}")
			if !strings.Contains(sel, `job="`+eventLogJob+`"`) {
				t.Errorf("%s %s: %q does not select job=%q", q.Dashboard, q.Where, q.Expr, eventLogJob)
			}
			for _, m := range matcher.FindAllStringSubmatch(sel, -1) {
				if !slices.Contains([]string{"job", "cluster", "node", "type"}, m[1]) {
					t.Errorf("%s %s: matches label %q, which the pipelines do not set", q.Dashboard, q.Where, m[1])
				}
			}
		}
	}
	if n == 0 {
		t.Error("no dashboard reads the event log")
	}
}

func toStrings(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func readYAML(t *testing.T, file string, v any) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}
