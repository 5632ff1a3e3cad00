package simulator

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The admin API (/sim/...) drives the simulator from outside the process:
// ground truth, counters, incidents and faults. It is not part of the console
// API, is never subject to injected faults, and is meant for loopback use.
// It is served only after EnableAdmin.

// EnableAdmin makes the server answer the /sim/ admin API too.
func (s *Simulator) EnableAdmin() { s.admin.Store(true) }

// AdminHandler serves only the admin API (for callers that mount it
// themselves, e.g. on another listener).
func (s *Simulator) AdminHandler() http.Handler { return http.HandlerFunc(s.serveAdmin) }

// BadBodyNames maps the admin API's fault kind names to BadBody values.
var BadBodyNames = map[string]BadBody{
	"malformed":      BodyMalformedJSON,
	"truncated-gzip": BodyTruncatedGzip,
	"wrong-shape":    BodyWrongShape,
	"html":           BodyHTML,
	"bomb":           BodyBomb,
	"endless":        BodyEndless,
	"message":        BodyMessage,
}

type adminEvent struct {
	Type        string `json:"type"`
	Date        int64  `json:"date"`
	Duration    int64  `json:"duration"`
	Comment     string `json:"comment"`
	CompletedAt int64  `json:"completedAt"`
	Seq         int64  `json:"seq"`
}

func adminJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func adminError(w http.ResponseWriter, status int, msg string) {
	adminJSON(w, status, map[string]string{"message": msg})
}

func (s *Simulator) serveAdmin(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	q := r.URL.Query()
	if r.Method == http.MethodGet {
		switch path {
		case "/sim/truth":
			s.adminTruth(w, q.Get("node"))
		case "/sim/stats":
			adminJSON(w, http.StatusOK, s.Stats())
		case "/sim/readings":
			adminJSON(w, http.StatusOK, map[string]string{"readings": s.Readings().String()})
		case "/sim/nodes":
			type nodeInfo struct {
				Key     string   `json:"key"`
				Number  int      `json:"number"`
				Tables  []string `json:"tables"`
				Indexes []string `json:"indexes"`
			}
			var out []nodeInfo
			for _, n := range s.nodeList {
				out = append(out, nodeInfo{n.key, n.number, n.tables, n.indexes})
			}
			adminJSON(w, http.StatusOK, out)
		default:
			adminError(w, http.StatusNotFound, "unknown admin endpoint "+path)
		}
		return
	}
	if r.Method != http.MethodPost {
		adminError(w, http.StatusMethodNotAllowed, "use GET or POST")
		return
	}
	switch {
	case strings.HasPrefix(path, "/sim/incident/"):
		s.adminIncident(w, strings.TrimPrefix(path, "/sim/incident/"), q)
	case path == "/sim/fault":
		s.adminFault(w, q)
	case path == "/sim/readings":
		s.adminReadings(w, q)
	case path == "/sim/clock":
		s.adminClock(w, q)
	case path == "/sim/faults/clear":
		s.ClearFaults()
		adminJSON(w, http.StatusOK, map[string]string{"status": "cleared"})
	case path == "/sim/revoke":
		s.RevokeTokens()
		adminJSON(w, http.StatusOK, map[string]string{"status": "revoked"})
	default:
		adminError(w, http.StatusNotFound, "unknown admin endpoint "+path)
	}
}

func (s *Simulator) adminNode(w http.ResponseWriter, key string) (string, bool) {
	if _, ok := s.byKey[key]; ok {
		return key, true
	}
	if _, ok := s.byKey[nodeKey(key, 9999)]; ok && !strings.Contains(key, ":") {
		return nodeKey(key, 9999), true
	}
	adminError(w, http.StatusBadRequest, "unknown node "+strconv.Quote(key)+": use host:port of /sim/nodes")
	return "", false
}

func (s *Simulator) adminTruth(w http.ResponseWriter, key string) {
	key, ok := s.adminNode(w, key)
	if !ok {
		return
	}
	evs := s.Truth(key)
	out := make([]adminEvent, len(evs))
	for i, e := range evs {
		out[i] = adminEvent{e.Type, e.Date, e.Duration, e.Comment, e.CompletedAt, e.Seq}
	}
	adminJSON(w, http.StatusOK, out)
}

func (s *Simulator) adminIncident(w http.ResponseWriter, kind string, q map[string][]string) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	needNode := func() (string, bool) { return s.adminNode(w, get("node")) }
	switch kind {
	case "node-down":
		reporter, ok := needNode()
		if !ok {
			return
		}
		down := get("down")
		if k, ok := s.byKey[down]; ok {
			down = k.key
		} else if _, ok := s.byKey[nodeKey(down, 9999)]; ok && !strings.Contains(down, ":") {
			down = nodeKey(down, 9999)
		}
		if down == "" {
			adminError(w, http.StatusBadRequest, "node-down needs down= (node key or number)")
			return
		}
		s.ReportNodeDown(reporter, down)
	case "memory-low":
		key, ok := needNode()
		if !ok {
			return
		}
		s.MemoryLowEpisode(key, q["index"]...)
	case "reload":
		key, ok := needNode()
		if !ok {
			return
		}
		s.ReloadIndexes(key, q["index"]...)
	case "stop":
		s.StopCluster()
	case "start":
		s.StartCluster()
	default:
		adminError(w, http.StatusNotFound, "unknown incident "+strconv.Quote(kind)+
			": node-down, memory-low, reload, stop or start")
		return
	}
	adminJSON(w, http.StatusOK, map[string]string{"status": "logged", "incident": kind})
}

// adminFault sets a fault from query parameters:
// node= (absent: console-wide), kind= (latency, hang, status, down, or a
// BadBodyNames key), latency= (Go duration), status=, count=, for= (Go
// duration after which the fault is cleared; the only way to end a console
// "down" fault from outside, since the admin API shares the listener).
func (s *Simulator) adminFault(w http.ResponseWriter, q map[string][]string) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	var f Fault
	var err error
	if v := get("latency"); v != "" {
		if f.Latency, err = time.ParseDuration(v); err != nil {
			adminError(w, http.StatusBadRequest, "bad latency: "+err.Error())
			return
		}
	}
	if v := get("status"); v != "" {
		if f.Status, err = strconv.Atoi(v); err != nil || f.Status < 100 || f.Status > 599 {
			adminError(w, http.StatusBadRequest, "bad status "+strconv.Quote(v))
			return
		}
	}
	if v := get("count"); v != "" {
		if f.Count, err = strconv.Atoi(v); err != nil || f.Count < 0 {
			adminError(w, http.StatusBadRequest, "bad count "+strconv.Quote(v))
			return
		}
	}
	var clearAfter time.Duration
	if v := get("for"); v != "" {
		if clearAfter, err = time.ParseDuration(v); err != nil || clearAfter <= 0 {
			adminError(w, http.StatusBadRequest, "bad for= duration "+strconv.Quote(v))
			return
		}
	}
	switch kind := get("kind"); kind {
	case "", "latency", "status":
	case "hang":
		f.Hang = true
	case "down":
		f.Down = true
	default:
		b, ok := BadBodyNames[kind]
		if !ok {
			adminError(w, http.StatusBadRequest, "unknown fault kind "+strconv.Quote(kind))
			return
		}
		f.Body = b
	}
	nodeParam := get("node")
	if nodeParam == "" {
		if f.Down && clearAfter == 0 {
			adminError(w, http.StatusBadRequest,
				"kind=down needs for=DURATION: the admin API goes down with the console")
			return
		}
		// Answer in full before a Down fault closes the connection under us.
		body := []byte(`{"status":"set","scope":"console"}` + "\n")
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		s.SetConsoleFault(f)
		if clearAfter > 0 {
			time.AfterFunc(clearAfter, func() { s.clearConsoleFault(f) })
		}
		return
	}
	if f.Down {
		adminError(w, http.StatusBadRequest, "kind=down applies to the console only (no node=)")
		return
	}
	key, ok := s.adminNode(w, nodeParam)
	if !ok {
		return
	}
	s.SetNodeFault(key, f)
	if clearAfter > 0 {
		time.AfterFunc(clearAfter, func() { s.clearNodeFault(key, f) })
	}
	adminJSON(w, http.StatusOK, map[string]string{"status": "set", "scope": key})
}

// clearConsoleFault removes the console fault if it is still f.
func (s *Simulator) clearConsoleFault(f Fault) {
	s.faults.mu.Lock()
	same := s.faults.console != nil && s.faults.console.f == f
	if same {
		s.faults.console = nil
	}
	s.faults.mu.Unlock()
	if same || f.Down {
		s.setDown(false)
	}
}

func (s *Simulator) clearNodeFault(key string, f Fault) {
	s.faults.mu.Lock()
	if af := s.faults.nodes[key]; af != nil && af.f == f {
		delete(s.faults.nodes, key)
	}
	s.faults.mu.Unlock()
}

// adminClock steps clocks: step= (a Go duration, negative: back) moves the
// console's clock and every node's with it (StepClock), or with node= that
// node's alone (ShiftClock).
func (s *Simulator) adminClock(w http.ResponseWriter, q map[string][]string) {
	var v, key string
	if vs := q["step"]; len(vs) > 0 {
		v = vs[0]
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		adminError(w, http.StatusBadRequest, "clock needs step=DURATION (e.g. -90s): "+strconv.Quote(v))
		return
	}
	if vs := q["node"]; len(vs) > 0 && vs[0] != "" {
		var ok bool
		if key, ok = s.adminNode(w, vs[0]); !ok {
			return
		}
		s.ShiftClock(key, d)
		adminJSON(w, http.StatusOK, map[string]string{"status": "stepped", "scope": key, "step": d.String()})
		return
	}
	s.StepClock(d)
	adminJSON(w, http.StatusOK, map[string]string{"status": "stepped", "scope": "console", "step": d.String()})
}

// adminReadings changes readings while serving (an upgrade or a restart of
// the console): each parameter named as the simulator's flag sets that
// knob, the others stay, e.g. POST /sim/readings?count-running=true&last=newest.
func (s *Simulator) adminReadings(w http.ResponseWriter, q map[string][]string) {
	r, err := ApplyReadingParams(s.Readings(), q)
	if err != nil {
		adminError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.SetReadings(r)
	adminJSON(w, http.StatusOK, map[string]string{"readings": r.String()})
}
