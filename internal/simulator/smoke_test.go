package simulator

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestSmoke(t *testing.T) {
	clk := NewManualClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	s := New(Config{Users: map[string]string{"monitor": "monitor"}, Clock: clk, Rate: 2, Seed: 1,
		Nodes: []NodeConfig{{Host: "n1"}, {Host: "n2"}}})
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := http.Post(s.URL()+"/api/login", "application/json", strings.NewReader(`{"name":"monitor","password":"monitor"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	t.Logf("%d %s", resp.StatusCode, b)
	clk.Advance(5 * time.Second)
	tok := string(b[7:71])
	req, _ := http.NewRequest("GET", s.URL()+"/api/monitor/get/lastevents/0", nil)
	req.Header.Set("Authorization", tok)
	req.Header.Set("Monitor-Target-Host", "n1")
	req.Header.Set("Monitor-Target-Port", "9999")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	t.Logf("%d %v %s", resp.StatusCode, resp.Header, b)
}
