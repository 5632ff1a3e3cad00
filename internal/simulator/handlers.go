package simulator

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Endpoint names, as counted in Stats.Requests.
const (
	epLogin      = "login"
	epVersion    = "version"
	epColumns    = "columns"
	epEvents     = "events"
	epEventsDate = "events_date"
	epLastEvents = "lastevents"
	epEventAsc   = "event_asc"
	epEventDesc  = "event_desc"
	epEventCount = "event_count"
)

const (
	monitorPrefix = "/api/monitor/get/"
	refusalText   = "No session attribute found, please log in again (session expired or invalid token)"
)

// route names the endpoint of a request and its path parameters; "" when
// the path is not a console endpoint.
func route(method, path string) (string, []string) {
	if path == "/api/login" {
		if method == http.MethodPost {
			return epLogin, nil
		}
		return "", nil
	}
	if method != http.MethodGet || !strings.HasPrefix(path, monitorPrefix) {
		return "", nil
	}
	seg := strings.Split(strings.TrimSuffix(path[len(monitorPrefix):], "/"), "/")
	switch {
	case len(seg) == 1 && seg[0] == "version":
		return epVersion, nil
	case len(seg) == 2 && seg[0] == "columns" && seg[1] != "":
		return epColumns, seg[1:]
	case len(seg) == 1 && seg[0] == "events":
		return epEvents, nil
	case len(seg) == 2 && seg[0] == "events":
		return epEventsDate, seg[1:]
	case len(seg) == 2 && seg[0] == "lastevents":
		return epLastEvents, seg[1:]
	case len(seg) == 5 && seg[0] == "event" && seg[1] == "asc":
		return epEventAsc, seg[2:]
	case len(seg) == 5 && seg[0] == "event" && seg[1] == "desc":
		return epEventDesc, seg[2:]
	case len(seg) == 4 && seg[0] == "event" && seg[1] == "count":
		return epEventCount, seg[2:]
	}
	return "", nil
}

func (s *Simulator) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if s.admin.Load() && strings.HasPrefix(r.URL.Path, "/sim/") {
		s.serveAdmin(w, r)
		return
	}
	name, params := route(r.Method, r.URL.Path)
	if name != "" {
		s.st.add(func(st *Stats) { st.Requests[name]++; st.Protocols[r.Proto]++ })
	}
	if f, ok := s.takeFault(""); ok && s.applyFault(w, r, f) {
		return
	}
	if name == epLogin {
		s.handleLogin(w, r)
		return
	}
	if !s.authorized(r.Header.Get("Authorization"), s.clock.Now().UnixMilli()) {
		s.st.add(func(st *Stats) { st.Refused++ })
		s.writeRefusal(w, r)
		return
	}
	if name == "" {
		s.writeMessage(w, r, http.StatusNotFound, "No endpoint "+r.Method+" "+r.URL.Path)
		return
	}
	host := r.Header.Get("Monitor-Target-Host")
	portText := r.Header.Get("Monitor-Target-Port")
	if host == "" || portText == "" {
		s.writeMessage(w, r, http.StatusBadRequest,
			"Missing Monitor-Target-Host or Monitor-Target-Port header")
		return
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port <= 0 || port > 65535 {
		s.writeMessage(w, r, http.StatusBadRequest, "Bad Monitor-Target-Port header: "+strconv.Quote(portText))
		return
	}
	n := s.byKey[nodeKey(host, port)]
	if n == nil {
		s.writeMessage(w, r, http.StatusBadGateway,
			"Cannot reach node "+nodeKey(host, port)+": connection refused")
		return
	}
	s.st.add(func(st *Stats) { st.NodeRequests[n.key]++ })
	if f, ok := s.takeFault(n.key); ok && s.applyFault(w, r, f) {
		return
	}
	s.serveNode(w, r, n, name, params)
}

type loginRequest struct {
	Name     string `json:"name"`
	Password string `json:"password"`
}

func (s *Simulator) handleLogin(w http.ResponseWriter, r *http.Request) {
	var req loginRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
		s.writeMessage(w, r, http.StatusBadRequest, "Bad login request: a JSON object {name, password} is expected")
		return
	}
	now := s.clock.Now().UnixMilli()
	token, ok := s.login(req.Name, req.Password, now)
	if !ok {
		s.st.add(func(st *Stats) { st.LoginFailures++ })
		s.writeMessage(w, r, s.cfg.RefusalStatus, "Bad credentials")
		return
	}
	s.st.add(func(st *Stats) { st.Logins++ })
	b := []byte(`{"id":`)
	b = appendJSONString(b, token)
	b = append(b, `,"userName":`...)
	b = appendJSONString(b, req.Name)
	b = append(b, `,"isAdministrator":`...)
	b = strconv.AppendBool(b, req.Name == "admin")
	b = append(b, `,"localUser":true,"createdAt":`...)
	b = strconv.AppendInt(b, now, 10)
	b = append(b, '}')
	s.writeJSON(w, r, http.StatusOK, b)
}

func parseInt(w http.ResponseWriter, r *http.Request, s *Simulator, what, v string) (int64, bool) {
	x, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		s.writeMessage(w, r, http.StatusBadRequest, "Bad parameter "+what+": "+strconv.Quote(v)+" is not an integer")
		return 0, false
	}
	return x, true
}

// serveNode answers a /api/monitor call for node n.
func (s *Simulator) serveNode(w http.ResponseWriter, r *http.Request, n *node, name string, p []string) {
	switch name {
	case epVersion:
		s.writeJSON(w, r, http.StatusOK, append(appendJSONString([]byte(`{"version":`), n.version), '}'))
	case epColumns:
		s.serveColumns(w, r, n, p[0])
	case epEvents:
		s.serveDay(w, r, n, "")
	case epEventsDate:
		s.serveDay(w, r, n, p[0])
	case epLastEvents:
		t, ok := parseInt(w, r, s, ":time", p[0])
		if !ok {
			return
		}
		s.serveListing(w, r, n, s.sinceQuery(t))
	case epEventAsc, epEventDesc, epEventCount:
		lo, ok := parseInt(w, r, s, ":start", p[0])
		if !ok {
			return
		}
		hi, ok := parseInt(w, r, s, ":end", p[1])
		if !ok {
			return
		}
		if name == epEventCount {
			s.serveCount(w, r, n, lo, hi)
			return
		}
		limit, ok := parseInt(w, r, s, ":limit", p[2])
		if !ok {
			return
		}
		if limit < 0 {
			s.writeMessage(w, r, http.StatusBadRequest, "Bad parameter :limit: must not be negative")
			return
		}
		s.serveListing(w, r, n, s.rangeQuery(name == epEventDesc, lo, hi, int(min(limit, maxInt32))))
	}
}

const (
	maxInt64 = int64(^uint64(0) >> 1)
	maxInt32 = int64(1<<31 - 1)
)

func (s *Simulator) serveColumns(w http.ResponseWriter, r *http.Request, n *node, table string) {
	for _, t := range n.tables {
		if t == table || t[strings.IndexByte(t, '.')+1:] == table {
			b := []byte{'['}
			for i, c := range tableColumns(t) {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"name":`...)
				b = appendJSONString(b, c[0])
				b = append(b, `,"type":`...)
				b = appendJSONString(b, c[1])
				b = append(b, '}')
			}
			s.writeJSON(w, r, http.StatusOK, append(b, ']'))
			return
		}
	}
	s.writeMessage(w, r, http.StatusNotFound, "Table not found: "+table)
}

// serveDay answers get/events (date "") or get/events/:date: the events of
// that day of the simulator's Location.
func (s *Simulator) serveDay(w http.ResponseWriter, r *http.Request, n *node, date string) {
	var day time.Time
	if date != "" {
		d, err := time.ParseInLocation("2006-01-02", date, s.loc)
		if err != nil {
			s.writeMessage(w, r, http.StatusBadRequest, "Bad date "+strconv.Quote(date)+": yyyy-mm-dd expected")
			return
		}
		day = d
	} else {
		n.mu.Lock()
		now := s.nowMS(n)
		n.mu.Unlock()
		y, m, d := time.UnixMilli(now).In(s.loc).Date()
		day = time.Date(y, m, d, 0, 0, 0, 0, s.loc)
	}
	lo := day.UnixMilli()
	hi := day.AddDate(0, 0, 1).UnixMilli() - 1
	s.serveListing(w, r, n, listingQuery{lo: lo, hi: hi, limit: s.readings().ListingCap, echo: lo})
}

// sinceQuery is get/lastevents/:time under the readings in force.
func (s *Simulator) sinceQuery(t int64) listingQuery {
	rd := s.readings()
	q := listingQuery{lo: t, hi: maxInt64, limit: rd.ListingCap, echo: t}
	if rd.ExclusiveSince && t < maxInt64 {
		q.lo++
	}
	return q
}

// rangeQuery is get/event/asc or desc under the readings in force.
func (s *Simulator) rangeQuery(desc bool, start, end int64, limit int) listingQuery {
	rd := s.readings()
	if rd.MaxLimit > 0 && limit > rd.MaxLimit {
		limit = rd.MaxLimit
	}
	lo, hi := rd.inclusive(start, end)
	return listingQuery{lo: lo, hi: hi, limit: limit, limited: true, desc: desc, echo: start}
}
