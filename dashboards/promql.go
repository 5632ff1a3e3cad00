package dashboards

import (
	"fmt"
	"sort"
	"strings"
)

// MetricNames returns the metric names an expression selects, sorted and
// without duplicates. It is a small lexer, not a parser: the syntax itself is
// checked by promtool (the Prometheus parser module would pull most of
// Prometheus into go.mod). It knows enough of PromQL to tell a metric name
// from a function, an aggregation, a keyword, a label in by/on/without
// lists, a label matcher, a string, a number and a duration.
func MetricNames(expr string) ([]string, error) {
	l := lexer{s: expr}
	names := map[string]bool{}
	for {
		tok, err := l.next()
		if err != nil {
			return nil, fmt.Errorf("%w in %q", err, expr)
		}
		switch tok.kind {
		case tokEOF:
			out := make([]string, 0, len(names))
			for n := range names {
				out = append(out, n)
			}
			sort.Strings(out)
			return out, nil
		case tokSelectorBraces:
			// A selector without a name before its braces: {__name__="x"}.
			if n := nameMatcher(tok.text); n != "" {
				names[n] = true
			} else if !tok.afterName {
				return nil, fmt.Errorf("selector %s has no metric name (only equality on __name__ is understood) in %q", tok.text, expr)
			}
		case tokIdent:
			id := tok.text
			lower := strings.ToLower(id)
			switch {
			case clauseKeywords[lower]:
				if l.peekByte() == '(' {
					if _, err := l.skipGroup('(', ')'); err != nil {
						return nil, fmt.Errorf("%w in %q", err, expr)
					}
				}
			case lower == "offset":
				l.skipSpace()
				if l.peekByte() == '-' {
					l.pos++
				}
				if _, err := l.next(); err != nil { // the duration
					return nil, fmt.Errorf("%w in %q", err, expr)
				}
			case operatorKeywords[lower], aggregations[lower], lower == "inf", lower == "nan":
				// Aggregations are keywords in PromQL, never metric names, and
				// may be followed by a by/without clause before their arguments.
			case l.peekByte() == '(':
				// A function or an aggregation: its arguments are lexed next.
			default:
				names[id] = true
				l.lastWasName = true
				continue
			}
		}
		l.lastWasName = false
	}
}

// Keywords followed by a parenthesised list of label names.
var clauseKeywords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

// Aggregation operators.
var aggregations = map[string]bool{
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
	"limitk": true, "limit_ratio": true,
}

// Keywords that are binary operators or modifiers.
var operatorKeywords = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "atan2": true}

type tokKind int

const (
	tokEOF tokKind = iota
	tokIdent
	tokSelectorBraces // {...}, text holds it whole
	tokOther          // number, string, operator, bracketed range
)

type token struct {
	kind      tokKind
	text      string
	afterName bool // for tokSelectorBraces: a metric name came right before
}

type lexer struct {
	s           string
	pos         int
	lastWasName bool
}

func (l *lexer) peekByte() byte {
	l.skipSpace()
	if l.pos < len(l.s) {
		return l.s[l.pos]
	}
	return 0
}

func (l *lexer) skipSpace() {
	for l.pos < len(l.s) {
		c := l.s[l.pos]
		switch c {
		case ' ', '\t', '\n', '\r':
			l.pos++
		case '#': // comment to end of line
			for l.pos < len(l.s) && l.s[l.pos] != '\n' {
				l.pos++
			}
		default:
			return
		}
	}
}

func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentChar(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }

func (l *lexer) next() (token, error) {
	l.skipSpace()
	if l.pos >= len(l.s) {
		return token{kind: tokEOF}, nil
	}
	c := l.s[l.pos]
	start := l.pos
	switch {
	case isIdentStart(c):
		for l.pos < len(l.s) && isIdentChar(l.s[l.pos]) {
			l.pos++
		}
		return token{kind: tokIdent, text: l.s[start:l.pos]}, nil
	case c >= '0' && c <= '9' || (c == '.' && l.pos+1 < len(l.s) && l.s[l.pos+1] >= '0' && l.s[l.pos+1] <= '9'):
		// Numbers (1, 0.9, 1e3, 0x1f) and durations (5m, 1h30m).
		for l.pos < len(l.s) && (isIdentChar(l.s[l.pos]) || l.s[l.pos] == '.') {
			if (l.s[l.pos] == 'e' || l.s[l.pos] == 'E') && l.pos+1 < len(l.s) && (l.s[l.pos+1] == '+' || l.s[l.pos+1] == '-') {
				l.pos++
			}
			l.pos++
		}
		return token{kind: tokOther, text: l.s[start:l.pos]}, nil
	case c == '"' || c == '\'' || c == '`':
		if err := l.skipString(); err != nil {
			return token{}, err
		}
		return token{kind: tokOther, text: l.s[start:l.pos]}, nil
	case c == '{':
		after := l.lastWasName
		text, err := l.skipGroup('{', '}')
		if err != nil {
			return token{}, err
		}
		return token{kind: tokSelectorBraces, text: text, afterName: after}, nil
	case c == '[':
		text, err := l.skipGroup('[', ']')
		if err != nil {
			return token{}, err
		}
		return token{kind: tokOther, text: text}, nil
	case c == '}' || c == ']':
		return token{}, fmt.Errorf("unbalanced %q at offset %d", c, l.pos)
	default:
		l.pos++
		return token{kind: tokOther, text: l.s[start:l.pos]}, nil
	}
}

// skipString skips a quoted string starting at pos (backslash escapes in
// ” and "" strings, none in backquoted strings).
func (l *lexer) skipString() error {
	q := l.s[l.pos]
	start := l.pos
	l.pos++
	for l.pos < len(l.s) {
		c := l.s[l.pos]
		if c == '\\' && q != '`' {
			l.pos += 2
			continue
		}
		l.pos++
		if c == q {
			return nil
		}
	}
	return fmt.Errorf("unterminated string at offset %d", start)
}

// skipGroup skips from an opening delimiter at pos to its matching closing
// one, strings inside included, and returns the text skipped.
func (l *lexer) skipGroup(open, closing byte) (string, error) {
	l.skipSpace()
	start := l.pos
	if l.pos >= len(l.s) || l.s[l.pos] != open {
		return "", fmt.Errorf("expected %q at offset %d", open, l.pos)
	}
	depth := 0
	for l.pos < len(l.s) {
		c := l.s[l.pos]
		switch c {
		case '"', '\'', '`':
			if err := l.skipString(); err != nil {
				return "", err
			}
			continue
		case open:
			depth++
		case closing:
			depth--
			if depth == 0 {
				l.pos++
				return l.s[start:l.pos], nil
			}
		}
		l.pos++
	}
	return "", fmt.Errorf("unbalanced %q at offset %d", open, start)
}

// nameMatcher returns X of a __name__="X" matcher inside braces, or "".
func nameMatcher(braces string) string {
	inner := strings.TrimSuffix(strings.TrimPrefix(braces, "{"), "}")
	for _, m := range strings.Split(inner, ",") {
		k, v, ok := strings.Cut(m, "=")
		if !ok || strings.TrimSpace(k) != "__name__" || strings.HasPrefix(v, "~") || strings.HasSuffix(k, "!") {
			continue
		}
		return strings.Trim(strings.TrimSpace(v), "\"'`")
	}
	return ""
}
