package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

func TestFlagsToConfig(t *testing.T) {
	o, err := parseFlags([]string{"--node", "db1:9999", "--node", "db2:10000", "--user", "a:b:c",
		"--user", "ops:pw", "--static-token", "T", "--token-lifetime", "30m", "--rate", "2.5",
		"--listing-cap", "100", "--max-limit", "50", "--location", "Europe/Paris", "--refusal-status", "403",
		"--sso-proxy", "redirect"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := o.config(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Nodes) != 2 || cfg.Nodes[1].Key() != "db2:10000" {
		t.Errorf("nodes: %+v", cfg.Nodes)
	}
	if cfg.Users["a"] != "b:c" || cfg.Users["ops"] != "pw" || len(cfg.Users) != 2 {
		t.Errorf("users: %d entries", len(cfg.Users))
	}
	if cfg.TokenLifetime != 30*time.Minute || cfg.Rate != 2.5 || cfg.ListingCap != 100 ||
		cfg.MaxLimit != 50 || cfg.Location.String() != "Europe/Paris" || cfg.RefusalStatus != 403 ||
		len(cfg.StaticTokens) != 1 || cfg.SSOProxy != simulator.SSORedirect {
		t.Errorf("config: %+v", cfg)
	}

	o, _ = parseFlags([]string{"--nodes", "4"})
	cfg, _ = o.config(nil)
	if len(cfg.Nodes) != 4 || cfg.Nodes[3].Key() != "indexima-core-4:9999" || cfg.Users["monitor"] != "monitor" ||
		cfg.SSOProxy != simulator.SSONone {
		t.Errorf("defaults: %+v", cfg)
	}
	o, _ = parseFlags([]string{"--no-auth"})
	if cfg, _ = o.config(nil); len(cfg.Users) != 0 {
		t.Errorf("--no-auth kept users")
	}
	o, _ = parseFlags([]string{"--no-date"})
	if cfg, _ = o.config(nil); !cfg.Readings.NoDate {
		t.Errorf("--no-date: the Date header is still sent")
	}
	o, _ = parseFlags(nil)
	if cfg, _ = o.config(nil); cfg.Readings.NoDate || len(cfg.Users) == 0 {
		t.Errorf("defaults: Date header left out %v, users %v; want the Date and authentication", cfg.Readings.NoDate, cfg.Users)
	}
	// Every boolean is named for what it turns on: --help shows no
	// --[no-]no-... flag.
	app, _ := newApp()
	for _, f := range app.Model().Flags {
		if strings.HasPrefix(f.Name, "no-") {
			t.Errorf("flag --%s is named negatively: its help reads --[no-]%s", f.Name, f.Name)
		}
	}

	for _, bad := range [][]string{{"--user", "nopassword"}, {"--node", "nohostport"}, {"--nodes", "0"},
		{"--location", "Mars/Olympus"}, {"--refusal-status", "42"}} {
		o, err := parseFlags(bad)
		if err == nil {
			_, err = o.config(nil)
		}
		if err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	if _, err := parseFlags([]string{"--scenario", "chaos"}); err == nil {
		t.Error("unknown scenario accepted")
	}
	if _, err := parseFlags([]string{"--sso-proxy", "portal"}); err == nil {
		t.Error("unknown --sso-proxy accepted")
	}
}

// The console profile, node clock offsets and the initial start's age.
func TestProfileFlags(t *testing.T) {
	o, err := parseFlags([]string{"--nodes", "3", "--profile", "console-clock-completed-only",
		"--node-clock-offset", "indexima-core-2=-20s", "--node-clock-offset", "indexima-core-3:9999=-90s",
		"--started-ago", "30h", "--count-running"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := o.config(nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Last != simulator.LastConsoleClock || cfg.Runnings != simulator.RunningsEmpty || cfg.NewestFirst || !cfg.CountRunning || cfg.StartedAgo != 30*time.Hour {
		t.Errorf("profile flags gave %+v", cfg)
	}
	if got := []time.Duration{cfg.Nodes[0].ClockOffset, cfg.Nodes[1].ClockOffset, cfg.Nodes[2].ClockOffset}; got[0] != 0 || got[1] != -20*time.Second || got[2] != -90*time.Second {
		t.Errorf("clock offsets %v", got)
	}
	for _, args := range [][]string{
		{"--profile", "nonsense"},
		{"--node-clock-offset", "nowhere=-5s"},
		{"--node-clock-offset", "indexima-core-1"},
	} {
		o, err := parseFlags(args)
		if err == nil {
			_, err = o.config(nil)
		}
		if err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

func TestRunServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	urls := make(chan string, 1)
	codes := make(chan int, 1)
	var logs testkit.SyncBuffer
	go func() {
		codes <- run(ctx, []string{"--listen", "127.0.0.1:0", "--nodes", "2", "--user", "monitor:pa55word",
			"--speed", "600", "--scenario", "lively", "--rate", "1"}, &logs, func(u string) { urls <- u })
	}()
	var url string
	select {
	case url = <-urls:
	case code := <-codes:
		t.Fatalf("run exited %d: %s", code, logs.String())
	case <-time.After(20 * time.Second):
		t.Fatal("not listening")
	}
	resp, err := http.Post(url+"/api/login", "application/json", strings.NewReader(`{"name":"monitor","password":"pa55word"}`))
	if err != nil {
		t.Fatal(err)
	}
	var sess struct{ ID string }
	err = json.NewDecoder(resp.Body).Decode(&sess)
	resp.Body.Close()
	if err != nil || len(sess.ID) != 64 {
		t.Fatalf("login: %v %q", err, sess.ID)
	}
	req, _ := http.NewRequest("GET", url+"/api/monitor/get/events", nil)
	req.Header.Set("Authorization", sess.ID)
	req.Header.Set("Monitor-Target-Host", "indexima-core-2")
	req.Header.Set("Monitor-Target-Port", "9999")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"CLUSTER_START"`) {
		t.Fatalf("events: %d %.200s", resp.StatusCode, body)
	}
	resp, err = http.Get(url + "/sim/stats")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("admin API: %v", err)
	}
	resp.Body.Close()
	cancel()
	select {
	case code := <-codes:
		if code != 0 {
			t.Errorf("exit code %d", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("run did not return after cancel")
	}
	if strings.Contains(logs.String(), "pa55word") {
		t.Error("the password reached the logs")
	}
	// --speed 600 dates events ahead of the real clock; the log says so.
	if !strings.Contains(logs.String(), "level=warn") || !strings.Contains(logs.String(), "runs ahead of the real one") {
		t.Errorf("no warning that --speed 600 runs the console's clock ahead of the real one:\n%s", logs.String())
	}
}
