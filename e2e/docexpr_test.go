package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/indexima-exporter/indexima_exporter/dashboards"
	"github.com/indexima-exporter/indexima_exporter/event"
)

// docExpr is a PromQL expression the README or docs/*.md give a reader,
// found in the text itself: a line (or lines) of a ```promql block, or a
// code span that is PromQL (isPromQL).
type docExpr struct {
	where string // file:line
	expr  string // as written
	// query is what is sent to Prometheus: placeholders such as
	// node="NODE" become node=~".+", Grafana's $__rate_interval 1m.
	query string
	// emptyOK is set when the text around it says when it is empty (the
	// comments above it in a block, the paragraph or list item of a span).
	emptyOK bool
	// claim is the value the text says it keeps ("(should stay 0)"), at
	// every scrape; nil: none.
	claim *float64
}

func (d docExpr) String() string { return d.where + ": " + d.expr }

var (
	codeSpanRE = regexp.MustCompile("`([^`]+)`")
	// "(should stay 0)" in a block's comment or a metric table's row.
	claimRE = regexp.MustCompile(`\(?should stay (-?[0-9]+(?:\.[0-9]+)?)\)?`)
	emptyRE = regexp.MustCompile(`(?i)\bempty\b`)
	// A matcher's value written as a placeholder (node="NODE",
	// instance="INSTANCE"), as the runbook does.
	placeholderRE = regexp.MustCompile(`([a-z_]+)="([A-Z][A-Z0-9_]*)"`)
	// A metric table's row: | `name` | ... |
	metricRowRE = regexp.MustCompile("(?m)^\\| `(indexima_[a-z0-9_]+)` \\|")
	listItemRE  = regexp.MustCompile(`^\s*(?:[-*]|\d+\.)\s`)
	// The start of a span that is PromQL: a metric name of the exporter, or a
	// function or aggregation call.
	spanStartRE = regexp.MustCompile(`^(?:(indexima_[a-z0-9_]+)|([a-z_]+)\s*(?:\(|\s+(?:by|without)\s*\())`)
	// What may follow a metric name at the start of a PromQL span: the end,
	// a selector's braces, a range, or a binary operator between spaces (as
	// the docs write them; indexima_exporter/VERSION is a User-Agent).
	afterNameRE = regexp.MustCompile(`^(?:$|[{\[]|\s+(?:==|!=|>=|<=|[-+*/%^<>]|and|or|unless|offset)(?:\s|$))`)
	// A label list written as notation (indexima_events_total{node,event}),
	// not a selector: braces with no matcher.
	notationBracesRE = regexp.MustCompile(`\{[a-z_, ]*\}`)
)

// grafanaFunctions are Grafana's template-variable queries, written like
// PromQL calls in docs/dashboards.md: not PromQL.
var grafanaFunctions = []string{"label_values", "label_names", "metrics", "query_result"}

// docExpressions reads every PromQL expression of README.md and
// docs/*.md under root, and the metric table rows that claim a value.
func docExpressions(root string) ([]docExpr, error) {
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	var out []docExpr
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(root, f)
		exprs, err := markdownExpressions(rel, string(b))
		if err != nil {
			return nil, err
		}
		out = append(out, exprs...)
	}
	return out, nil
}

// markdownExpressions finds the PromQL of one Markdown text.
func markdownExpressions(file, text string) ([]docExpr, error) {
	lines := strings.Split(text, "\n")
	var out []docExpr
	fence := "" // the language of the fenced block we are in, "" outside
	inFence := false
	var comments, body []string
	bodyLine := 0
	flush := func() error {
		if len(body) > 0 {
			d, err := newDocExpr(fmt.Sprintf("%s:%d", file, bodyLine), strings.Join(body, "\n"), strings.Join(comments, " "), strings.Join(comments, " "))
			if err != nil {
				return err
			}
			out = append(out, d)
			comments = nil
		}
		body = nil
		return nil
	}
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			if inFence {
				if err := flush(); err != nil {
					return nil, err
				}
				comments = nil
			}
			inFence, fence = !inFence, strings.TrimPrefix(trimmed, "```")
			continue
		}
		if inFence {
			if fence != "promql" {
				continue
			}
			switch {
			case trimmed == "":
				if err := flush(); err != nil {
					return nil, err
				}
				comments = nil
			case strings.HasPrefix(trimmed, "#"):
				if err := flush(); err != nil {
					return nil, err
				}
				comments = append(comments, strings.TrimSpace(strings.TrimPrefix(trimmed, "#")))
			default:
				if len(body) == 0 {
					bodyLine = i + 1
				}
				body = append(body, line)
			}
			continue
		}
		if m := metricRowRE.FindStringSubmatch(line); m != nil && claimRE.MatchString(line) {
			d, err := newDocExpr(fmt.Sprintf("%s:%d", file, i+1), m[1], line, line)
			if err != nil {
				return nil, err
			}
			out = append(out, d)
			continue
		}
		for _, m := range codeSpanRE.FindAllStringSubmatch(line, -1) {
			if !isPromQL(m[1]) {
				continue
			}
			// A span's own value claims are not read (prose says them
			// in many ways); its paragraph may say when it is empty.
			d, err := newDocExpr(fmt.Sprintf("%s:%d", file, i+1), m[1], "", paragraph(lines, i))
			if err != nil {
				return nil, err
			}
			out = append(out, d)
		}
	}
	if inFence {
		return nil, fmt.Errorf("%s: a fenced block is not closed", file)
	}
	return out, nil
}

// newDocExpr makes the expression expr found at where; claims is the text
// that may claim its value, context the text that may say it is empty.
func newDocExpr(where, expr, claims, context string) (docExpr, error) {
	d := docExpr{where: where, expr: expr, emptyOK: emptyRE.MatchString(context)}
	if m := claimRE.FindStringSubmatch(claims); m != nil {
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return d, fmt.Errorf("%s: claim %q: %v", where, m[0], err)
		}
		d.claim = &v
	}
	q := placeholderRE.ReplaceAllStringFunc(expr, func(s string) string {
		m := placeholderRE.FindStringSubmatch(s)
		if slices.Contains(event.KnownTypes, m[2]) {
			return s // an event type, not a placeholder
		}
		return m[1] + `=~".+"`
	})
	if strings.Contains(q, "$") {
		var err error
		if q, err = dashboards.Substitute(q, dashboards.Builtins("1m", "1h")); err != nil {
			return d, fmt.Errorf("%s: %v", where, err)
		}
	}
	d.query = q
	return d, nil
}

// isPromQL tells a code span that is a PromQL expression an operator can
// run: it starts with one of the exporter's metric names followed by a
// selector, a range or an operator, or with a call (a function, an
// aggregation) that reads one of them. A bare metric name is a name, not an
// example; a label list in braces ({node,event}), a name ending in * or an
// ellipsis is notation; Grafana's label_values() is not PromQL; log lines, flags and
// commands start otherwise.
func isPromQL(span string) bool {
	if !strings.Contains(span, "indexima_") || strings.Contains(span, "...") || strings.Contains(span, "…") ||
		strings.Contains(span, "_*") || notationBracesRE.MatchString(span) {
		return false
	}
	m := spanStartRE.FindStringSubmatch(span)
	switch {
	case m == nil:
		return false
	case m[1] != "":
		rest := span[len(m[1]):]
		return rest != "" && afterNameRE.MatchString(rest)
	default:
		return !slices.Contains(grafanaFunctions, m[2])
	}
}

// paragraph is the text of the paragraph, list item or table row holding
// line i.
func paragraph(lines []string, i int) string {
	if strings.HasPrefix(strings.TrimSpace(lines[i]), "|") {
		return lines[i]
	}
	from := i
	for from > 0 && !listItemRE.MatchString(lines[from]) && strings.TrimSpace(lines[from-1]) != "" &&
		!strings.HasPrefix(strings.TrimSpace(lines[from-1]), "|") {
		from--
	}
	to := i
	for to+1 < len(lines) && strings.TrimSpace(lines[to+1]) != "" && !listItemRE.MatchString(lines[to+1]) &&
		!strings.HasPrefix(strings.TrimSpace(lines[to+1]), "```") {
		to++
	}
	return strings.Join(lines[from:to+1], " ")
}

// filterOperand splits a filter, an expression whose outermost operator is
// a comparison without bool (indexima_up == 0, age < 900), and returns what
// it filters: the filter's condition says when it is empty, so an empty
// answer is right when that operand has data.
func filterOperand(expr string) (string, bool) {
	depth := 0
	var quote byte
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		switch {
		case quote != 0:
			if c == '\\' && quote != '`' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case c == '#':
			for i < len(expr) && expr[i] != '\n' {
				i++
			}
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		case depth == 0 && (c == '<' || c == '>' || c == '=' || c == '!'):
			op := string(c)
			if i+1 < len(expr) && expr[i+1] == '=' {
				op += "="
			}
			if op == "=" || op == "!" { // not a comparison
				continue
			}
			rest := strings.TrimSpace(expr[i+len(op):])
			if strings.HasPrefix(rest, "bool") {
				return "", false
			}
			return strings.TrimSpace(expr[:i]), true
		}
	}
	return "", false
}
