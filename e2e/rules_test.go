package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// timeScale shrinks the shipped rules' durations for the test: a minute of
// production becomes 2 seconds, so that with a 1s scrape and evaluation
// interval the alerts keep their shape (window / for / scrape ratios) but go
// pending, fire and resolve within seconds. Only durations change:
//
//   - `for:` of every alerting rule (1m -> 2s, 5m -> 10s, 15m -> 30s);
//
//   - range windows and offsets inside expressions ([5m] -> [10s],
//     offset 5m -> offset 10s).
//
//   - a comparison with a window's number of seconds (an age against the
//     window: `< 300` beside `[5m]`) -> that window scaled (`< 10`).
//
// The expressions, labels and annotations are the shipped ones.
const timeScale = 30

const promDuration = `\d+[smh](?:\d+[smh])*`

var (
	rangeDuration  = regexp.MustCompile(`\[(` + promDuration + `)(:(` + promDuration + `)?)?\]`)
	offsetDuration = regexp.MustCompile(`offset\s+(` + promDuration + `)`)
	comparedNumber = regexp.MustCompile(`(<=|>=|<|>)(\s*)(\d+)\b`)
)

// scaleDuration divides a Prometheus duration by timeScale, rounding to
// whole seconds and never below 1s.
func scaleDuration(s string) (string, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return "", fmt.Errorf("duration %q: %w", s, err)
	}
	scaled := (d / timeScale).Round(time.Second)
	if scaled < time.Second {
		scaled = time.Second
	}
	return fmt.Sprintf("%ds", int(scaled/time.Second)), nil
}

// scaleExpr scales the range windows ([5m], subqueries [30m:1m]) and the
// offsets of an expression. The shipped rules have no duration inside a
// label value, which this textual rewrite would also touch.
func scaleExpr(expr string) (string, error) {
	var firstErr error
	scale := func(d string) string {
		s, err := scaleDuration(d)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return s
	}
	out := rangeDuration.ReplaceAllStringFunc(expr, func(m string) string {
		sub := rangeDuration.FindStringSubmatch(m)
		r := "[" + scale(sub[1])
		if sub[2] != "" {
			r += ":"
			if sub[3] != "" {
				r += scale(sub[3])
			}
		}
		return r + "]"
	})
	out = offsetDuration.ReplaceAllStringFunc(out, func(m string) string {
		return "offset " + scale(offsetDuration.FindStringSubmatch(m)[1])
	})
	// The windows in seconds: a number compared with is one of them only
	// when it equals a window of the same expression.
	windows := map[string]string{}
	for _, m := range rangeDuration.FindAllStringSubmatch(expr, -1) {
		if d, err := time.ParseDuration(m[1]); err == nil {
			windows[fmt.Sprint(int(d/time.Second))] = m[1]
		}
	}
	out = comparedNumber.ReplaceAllStringFunc(out, func(m string) string {
		sub := comparedNumber.FindStringSubmatch(m)
		w, ok := windows[sub[3]]
		if !ok {
			return m
		}
		return sub[1] + sub[2] + strings.TrimSuffix(scale(w), "s")
	})
	return out, firstErr
}

// scaledRules writes a time-scaled copy of every shipped rule file into dir
// and returns their paths.
func scaledRules(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "deploy", "prometheus", "rules", "*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no shipped rule file in deploy/prometheus/rules (err %v)", err)
	}
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Groups []struct {
				Name     string           `yaml:"name"`
				Interval string           `yaml:"interval,omitempty"`
				Rules    []map[string]any `yaml:"rules"`
			} `yaml:"groups"`
		}
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for gi := range doc.Groups {
			doc.Groups[gi].Interval = "" // the global 1s evaluation interval
			for _, r := range doc.Groups[gi].Rules {
				expr, _ := r["expr"].(string)
				scaled, err := scaleExpr(expr)
				if err != nil {
					t.Fatalf("%s: rule %v: %v", f, r["alert"], err)
				}
				r["expr"] = scaled
				if forDur, ok := r["for"].(string); ok {
					if r["for"], err = scaleDuration(forDur); err != nil {
						t.Fatalf("%s: rule %v: %v", f, r["alert"], err)
					}
				}
			}
		}
		b, err = yaml.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, filepath.Base(f))
		if err := os.WriteFile(dst, b, 0o600); err != nil {
			t.Fatal(err)
		}
		out = append(out, dst)
	}
	return out
}

func TestScaleExpr(t *testing.T) {
	for in, want := range map[string]string{
		`increase(a[5m]) > 0`:                           `increase(a[10s]) > 0`,
		`a unless a offset 5m and increase(b[10m]) > 0`: `a unless a offset 10s and increase(b[20s]) > 0`,
		`max_over_time(a[30m:1m])`:                      `max_over_time(a[60s:2s])`,
		`max_over_time(a[30m:])`:                        `max_over_time(a[60s:])`,
		`rate(a[1h30m])`:                                `rate(a[180s])`,
		`time() - max(max_over_time(a[5m])) < 300`:      `time() - max(max_over_time(a[10s])) < 10`,
		`max_over_time(a[5m]) > 300 and b < 30`:         `max_over_time(a[10s]) > 10 and b < 30`,
	} {
		got, err := scaleExpr(in)
		if err != nil {
			t.Errorf("scaleExpr(%q): %v", in, err)
		} else if got != want {
			t.Errorf("scaleExpr(%q) = %q, want %q", in, got, want)
		}
	}
}
