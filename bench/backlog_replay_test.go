package bench

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// First contact asks for times a loaded machine moves by a few ms (the
// console's clock is read as its Date plus the local time since), and may
// then make a call the recording did not (CI's TestCatchUpMemoryIsFlat got
// a 404 for a count of one millisecond): the replay answers such calls as
// the console stood at first contact would, for the range asked.
func TestReplayAnswersFirstContactCallsNotRecorded(t *testing.T) {
	bl := recordBacklog(t, 2000)
	url := bl.replay(t)
	get := func(h http.Handler, base, path string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Monitor-Target-Host", backlogNode.Host)
		req.Header.Set("Monitor-Target-Port", strconv.Itoa(backlogNode.Port))
		if h != nil {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			return w.Code, w.Body.String()
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	want := backlogSimulator(simulator.NewManualClock(time.UnixMilli(bl.start))).Handler()
	// A count of one millisecond an hour before first contact: never
	// recorded, nor anything within the replay's clock slack of it.
	m := strconv.FormatInt(bl.start-3600*1000, 10)
	for _, path := range []string{"/api/monitor/get/event/count/" + m + "/" + m, "/api/monitor/get/lastevents/" + m} {
		if _, ok := bl.files[path]; ok {
			t.Fatalf("%s was recorded: the case proves nothing", path)
		}
		code, body := get(nil, url, path)
		wantCode, wantBody := get(want, "", path)
		if code != http.StatusOK || code != wantCode || body != wantBody {
			t.Errorf("GET %s: %d\n%.300s\nwant %d\n%.300s", path, code, body, wantCode, wantBody)
		}
	}
	// The catch-up's calls are served as recorded.
	if code, _ := get(nil, url, bl.listing); code != http.StatusOK {
		t.Errorf("GET %s (the backlog listing): %d", bl.listing, code)
	}
}
