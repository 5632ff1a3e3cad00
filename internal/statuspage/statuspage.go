// Package statuspage serves /status: per cluster and node, what the
// exporter saw at its latest polls, as plain HTML read from the poller's
// records (loading it calls no console).
package statuspage

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/indexima-exporter/indexima_exporter/config"
	"github.com/indexima-exporter/indexima_exporter/eventlog"
	"github.com/indexima-exporter/indexima_exporter/internal/web"
	"github.com/indexima-exporter/indexima_exporter/poller"
)

//go:embed status.html
var statusHTML string

// statusTemplate is the /status page: server-side HTML, no script, one
// card per node that reflows to one column on a phone.
var statusTemplate = template.Must(template.New("status").Parse(statusHTML))

// statusPage is what the template shows; every value is formatted here.
type statusPage struct {
	Now         string
	Up, Total   int
	MetricsPath string
	ProbeOnly   bool
	Clusters    []statusCluster
}

type statusCluster struct {
	Name  string
	Up    int
	Nodes []statusNode
}

type statusNode struct {
	ID, Name, Target string
	State            string // up, down, waiting (class and data-state)
	StateText        string
	Last             *statusPoll // nil before the first poll
	Polls            []statusPoll

	Contacted              bool
	CountedTotal, Reported uint64
	Missed                 uint64 // reported minus counted, when positive
	Since, Semantics       string
	ClockLag, Cursor       string
	Running                string
	ClusterState           string
	Failures               string
	// Events are the node's latest counted events, the latest dated first
	// (at most ShownEvents).
	Events []statusEvent
}

// statusEvent is one counted event as the page shows it.
type statusEvent struct {
	When     string // the event's date (the node's clock), UTC, with milliseconds
	Type     string
	Duration string // "" when the console gave none
	Comment  string
	// DownNode is a NODE_DOWN's down node as the metrics and the event log
	// name it (eventlog.DownNodeOf), shown instead of the comment, with
	// Number, its number, when that is not the name already.
	DownNode, Number string
}

// ShownEvents is how many of a node's latest events the page shows.
const ShownEvents = 20

type statusPoll struct {
	When, Clock, Ago     string
	Duration             string
	Calls, EventsCounted int
	Up                   bool
	Outcome              string // the full outcome: ok and notes, or the error
	Short                string // the outcome in the table: ok and notes, or the reason
	// Detail is the error under the poll's row in the table, when it is
	// not the error of the newer poll above it (or of the card's last poll).
	Detail string
}

// Handler serves /status from what the poller recorded (it calls no
// console). Error texts are the typed errors' own, which hold no
// secret; as a second guard, every configured password is cut out of them
// should a console have echoed one in a body excerpt.
func Handler(exp *poller.Poller, configs web.Configs, metricsPath string, probeOnly bool, logger log.Logger) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		cfg, ok := web.ConfigForGET(w, req, configs)
		if !ok {
			return
		}
		page := buildStatusPage(exp.Status(), time.Now(), newRedactor(cfg))
		page.MetricsPath, page.ProbeOnly = metricsPath, probeOnly
		var b bytes.Buffer
		if err := statusTemplate.Execute(&b, page); err != nil {
			level.Error(logger).Log("msg", "rendering /status", "err", err)
			http.Error(w, "The status page could not be rendered; see the exporter's log.", http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		// No script, no frame, nothing fetched from elsewhere.
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		w.Write(b.Bytes())
	}
}

// redactor cuts secrets out of texts that came from a console.
type redactor struct{ secrets []string }

func newRedactor(cfg *config.Config) redactor {
	var r redactor
	for _, c := range cfg.Clusters {
		if p := string(c.Console.Password); p != "" {
			r.secrets = append(r.secrets, SecretForms(p)...)
		}
	}
	// The longest first, so that a password holding another is cut whole.
	sort.Slice(r.secrets, func(i, j int) bool { return len(r.secrets[i]) > len(r.secrets[j]) })
	return r
}

// SecretForms is a secret as an error text may hold it: raw (a console's
// decoded message), escaped in a JSON body (a body's excerpt), and either of
// those quoted by %q (a message quoted in an error).
func SecretForms(p string) []string {
	j, _ := json.Marshal(p)
	jsonForm := strings.TrimSuffix(strings.TrimPrefix(string(j), `"`), `"`)
	quoted := func(s string) string { q := strconv.Quote(s); return q[1 : len(q)-1] }
	forms := []string{p}
	for _, f := range []string{jsonForm, quoted(p), quoted(jsonForm)} {
		if !slices.Contains(forms, f) {
			forms = append(forms, f)
		}
	}
	return forms
}

func (r redactor) clean(s string) string {
	for _, p := range r.secrets {
		s = strings.ReplaceAll(s, p, "<secret>")
	}
	return s
}

func buildStatusPage(clusters []poller.ClusterStatus, now time.Time, red redactor) statusPage {
	page := statusPage{Now: now.UTC().Format("2006-01-02 15:04:05 UTC")}
	for _, c := range clusters {
		sc := statusCluster{Name: c.Name}
		for _, n := range c.Nodes {
			sn := statusNodeOf(n, now, red)
			if sn.State == "up" {
				sc.Up++
			}
			sc.Nodes = append(sc.Nodes, sn)
		}
		page.Up += sc.Up
		page.Total += len(sc.Nodes)
		page.Clusters = append(page.Clusters, sc)
	}
	return page
}

// NodeAnchor is the id of a node's card on /status, node-[<cluster>-]<name>:
// the alerts' status_url (mixin/alerts.libsonnet) and /sd link to it.
func NodeAnchor(cluster, name string) string {
	if cluster != "" {
		return "node-" + cluster + "-" + name
	}
	return "node-" + name
}

func statusNodeOf(n poller.NodeStatus, now time.Time, red redactor) statusNode {
	sn := statusNode{ID: NodeAnchor(n.Cluster, n.Name), Name: n.Name, Target: n.Target, State: "waiting", StateText: "not polled yet"}
	for i, p := range n.Polls {
		sp := statusPollOf(p, now, red)
		if !sp.Up && i > 0 && sp.Outcome != sn.Polls[i-1].Outcome {
			sp.Detail = sp.Outcome
		}
		sn.Polls = append(sn.Polls, sp)
	}
	if len(sn.Polls) > 0 {
		sn.Last = &sn.Polls[0]
		sn.State, sn.StateText = "down", "down"
		if sn.Last.Up {
			sn.State, sn.StateText = "up", "up"
		}
	}
	if len(n.Failures) > 0 {
		var parts []string
		for reason, c := range n.Failures {
			parts = append(parts, fmt.Sprintf("%s %d", reason, c))
		}
		sort.Strings(parts)
		sn.Failures = strings.Join(parts, ", ")
	}
	for _, e := range n.Events[:min(len(n.Events), ShownEvents)] {
		se := statusEvent{When: formatEventDate(time.UnixMilli(e.Date), now), Type: e.Type, Comment: e.Comment}
		if e.Type == "NODE_DOWN" {
			name, number := eventlog.DownNodeOf(e)
			se.DownNode = name
			if number != nil && strconv.Itoa(*number) != name {
				se.Number = strconv.Itoa(*number)
			}
		}
		if e.HasDuration {
			se.Duration = formatDuration(time.Duration(e.Duration) * time.Millisecond)
		}
		sn.Events = append(sn.Events, se)
	}
	if !n.Contacted {
		return sn
	}
	sn.Contacted = true
	sn.CountedTotal, sn.Reported = n.CountedTotal, n.Reported
	if n.Reported > n.CountedTotal {
		sn.Missed = n.Reported - n.CountedTotal
	}
	sn.Since = "first contact"
	if !n.Since.IsZero() {
		sn.Since = "first contact, " + formatWhen(n.Since, now)
	}
	sn.Semantics = n.Semantics
	switch {
	case !n.ClockLagKnown:
		sn.ClockLag = "not known (too few events shown lately, or a clock stepped)"
	case n.ClockLag == 0:
		sn.ClockLag = "none"
	case n.ClockLag > 0:
		sn.ClockLag = formatDuration(n.ClockLag) + " behind the console"
	default:
		sn.ClockLag = formatDuration(-n.ClockLag) + " ahead of the console"
	}
	sn.Cursor = "no event seen yet"
	if !n.Cursor.IsZero() {
		sn.Cursor = formatWhen(n.Cursor, now) + " (node's clock)"
	}
	sn.Running = "none"
	if total := n.RunningTotal(); total > 0 {
		var parts []string
		for _, t := range n.RunningTypes() {
			parts = append(parts, fmt.Sprintf("%s %d", t, n.Running[t]))
		}
		sn.Running = fmt.Sprintf("%d: %s", total, strings.Join(parts, ", "))
	}
	sn.ClusterState = n.ClusterState
	return sn
}

func statusPollOf(p poller.PollRecord, now time.Time, red redactor) statusPoll {
	sp := statusPoll{
		When:          formatWhen(p.Start, now),
		Clock:         p.Start.UTC().Format("15:04:05"),
		Ago:           formatDuration(now.Sub(p.Start).Truncate(time.Second)),
		Duration:      formatDuration(p.Duration),
		Calls:         p.Calls,
		EventsCounted: p.EventsCounted,
		Up:            p.Up(),
	}
	if !sp.Up {
		// The typed errors of the console client start with their kind
		// ("node unreachable: ..."), which is the reason; others get it.
		words := strings.ReplaceAll(p.Reason, "_", " ")
		sp.Outcome, sp.Short = red.clean(p.Error), words
		if !strings.HasPrefix(sp.Outcome, words) {
			sp.Outcome = words + ": " + sp.Outcome
		}
		return sp
	}
	var notes []string
	if p.FirstContact {
		notes = append(notes, "first contact")
	}
	if p.Searched {
		notes = append(notes, "searched")
	}
	if p.Incomplete {
		notes = append(notes, "search continues")
	}
	sp.Outcome = "ok"
	if len(notes) > 0 {
		sp.Outcome += ", " + strings.Join(notes, ", ")
	}
	sp.Short = sp.Outcome
	return sp
}

// formatWhen is a time of day, with its date when not now's day.
func formatWhen(t, now time.Time) string {
	t, now = t.UTC(), now.UTC()
	if t.YearDay() == now.YearDay() && t.Year() == now.Year() {
		return t.Format("15:04:05 UTC")
	}
	return t.Format("2006-01-02 15:04:05 UTC")
}

// formatEventDate is an event's date to the millisecond, with its day when
// not now's day.
func formatEventDate(t, now time.Time) string {
	t, now = t.UTC(), now.UTC()
	if t.YearDay() == now.YearDay() && t.Year() == now.Year() {
		return t.Format("15:04:05.000")
	}
	return t.Format("2006-01-02 15:04:05.000")
}

// formatDuration rounds a duration for people: milliseconds below a
// second, tenths of a second below a minute, seconds above.
func formatDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + formatDuration(-d)
	case d < time.Millisecond:
		return "<1ms"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}
