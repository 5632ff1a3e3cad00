package simulator

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

func adminCall(t *testing.T, s *Simulator, method, path string) (int, []byte) {
	t.Helper()
	a := call(t, s, path, reqOpts{method: method})
	return a.status, a.body
}

func TestAdminAPI(t *testing.T) {
	s, clk := newTestSim(t, Config{})
	s.EnableAdmin()
	tok := login(t, s)

	st, body := adminCall(t, s, "GET", "/sim/truth?node="+nodeA)
	var truth []struct {
		Type        string
		Date        int64
		CompletedAt int64
		Seq         int64
	}
	if st != 200 || json.Unmarshal(body, &truth) != nil || len(truth) != len(s.Truth(nodeA)) || truth[0].Type != ClusterStart {
		t.Fatalf("truth: %d %.200s", st, body)
	}
	if st, _ := adminCall(t, s, "GET", "/sim/truth?node=nowhere:1"); st != 400 {
		t.Errorf("truth of an unknown node: %d", st)
	}

	clk.Advance(time.Second)
	if st, body := adminCall(t, s, "POST", "/sim/incident/node-down?node=node-a&down="+nodeB); st != 200 {
		t.Fatalf("node-down: %d %s", st, body)
	}
	tr := s.Truth(nodeA)
	if e := tr[len(tr)-1]; e.Type != NodeDown || e.Comment != "2" {
		t.Errorf("node-down logged %+v", e)
	}
	idx := s.Indexes(nodeB)[2]
	if st, body := adminCall(t, s, "POST", "/sim/incident/memory-low?node="+nodeB+"&index="+idx); st != 200 {
		t.Fatalf("memory-low: %d %s", st, body)
	}
	tr = s.Truth(nodeB)
	if e := tr[len(tr)-1]; e.Type != HyperIndexUnloaded || e.Comment != idx {
		t.Errorf("memory-low logged %+v", e)
	}
	for _, inc := range []string{"reload?node=" + nodeB, "stop", "start"} {
		if st, body := adminCall(t, s, "POST", "/sim/incident/"+inc); st != 200 {
			t.Errorf("%s: %d %s", inc, st, body)
		}
	}
	if st, _ := adminCall(t, s, "POST", "/sim/incident/explode"); st != 404 {
		t.Errorf("unknown incident: %d", st)
	}

	if st, body := adminCall(t, s, "POST", "/sim/fault?node="+nodeA+"&status=502&count=1"); st != 200 {
		t.Fatalf("fault: %d %s", st, body)
	}
	if a := call(t, s, lastPath, reqOpts{token: tok, node: nodeA}); a.status != 502 {
		t.Errorf("after /sim/fault status=502: %d", a.status)
	}
	adminCall(t, s, "POST", "/sim/fault?node="+nodeA+"&kind=html")
	if a := call(t, s, lastPath, reqOpts{token: tok, node: nodeA}); !strings.Contains(string(a.body), "<html>") {
		t.Errorf("after kind=html: %s", a.body)
	}
	// Admin calls are not subject to faults, nor counted.
	adminCall(t, s, "POST", "/sim/fault?kind=message")
	if st, _ := adminCall(t, s, "GET", "/sim/stats"); st != 200 {
		t.Errorf("stats under a console fault: %d", st)
	}
	for _, bad := range []string{"kind=volcano", "status=abc", "latency=soon", "kind=down", "node=" + nodeA + "&kind=down&for=1s"} {
		if st, _ := adminCall(t, s, "POST", "/sim/fault?"+bad); st != 400 {
			t.Errorf("fault %s: %d, want 400", bad, st)
		}
	}
	adminCall(t, s, "POST", "/sim/faults/clear")
	if a := call(t, s, lastPath, reqOpts{token: tok, node: nodeA}); a.status != 200 {
		t.Errorf("after clear: %d", a.status)
	}
	adminCall(t, s, "POST", "/sim/revoke")
	if a := call(t, s, lastPath, reqOpts{token: tok, node: nodeA}); a.status != 401 {
		t.Errorf("after revoke: %d", a.status)
	}

	st, body = adminCall(t, s, "GET", "/sim/stats")
	var stats Stats
	if st != 200 || json.Unmarshal(body, &stats) != nil || stats.Requests["lastevents"] != 4 || stats.Refused != 1 {
		t.Errorf("stats: %d %s", st, body)
	}
}

func TestAdminConsoleDownFor(t *testing.T) {
	s, _ := newTestSim(t, Config{})
	s.EnableAdmin()
	if st, body := adminCall(t, s, "POST", "/sim/fault?kind=down&for=1h"); st != 200 {
		t.Fatalf("down: %d %s", st, body)
	}
	if resp, err := rawClient.Get(s.URL() + "/sim/stats"); err == nil {
		resp.Body.Close()
		t.Fatal("console down, yet /sim/stats answered")
	}
	s.ClearFaults()
	if st, body := adminCall(t, s, "POST", "/sim/fault?kind=down&for=50ms"); st != 200 {
		t.Fatalf("down: %d %s", st, body)
	}
	// Back by itself on the same address.
	testkit.WaitFor(t, "the console to come back", func() bool {
		resp, err := rawClient.Get(s.URL() + "/sim/stats")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

func TestAdminDisabledByDefault(t *testing.T) {
	s, _ := newTestSim(t, Config{Users: map[string]string{}})
	if st, _ := adminCall(t, s, "GET", "/sim/stats"); st != 404 {
		t.Errorf("/sim/ answered without EnableAdmin: %d", st)
	}
}
