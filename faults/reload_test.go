package faults

import (
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// A broken configuration, by SIGHUP and by POST /-/reload: refused, the
// running one stays in force and keeps counting exactly.
func TestReloadBrokenConfigKeepsOld(t *testing.T) {
	r := newRig(t, rigOpts{sim: simulator.Config{Seed: 13, Rate: 2}})
	r.scrape()
	r.run(3, 30*time.Second)
	broken := map[string]string{
		"yaml syntax": "console: [unclosed\n",
		"unknown key": r.configYAML(r.nodes) + "surprise: 1\n",
		"missing pw":  strings.Replace(r.configYAML(r.nodes), r.pwPath, r.pwPath+".missing", 1),
		"no nodes":    "console:\n  url: " + r.url + "\nnodes: []\n",
		"bad url":     strings.Replace(r.configYAML(r.nodes), r.url, "ftp://nowhere", 1),
		"empty file":  "",
	}
	for name, content := range broken {
		r.writeFile(r.cfgPath, content)
		line := r.exp.sighup()
		if !strings.Contains(line, "configuration refused") {
			t.Errorf("%s: SIGHUP outcome %q, want a refusal", name, line)
		}
		code, body := r.exp.reloadHTTP()
		if code != 500 || !strings.Contains(body, "previous one stays in force") {
			t.Errorf("%s: POST /-/reload = %d %q, want 500 and the old one kept", name, code, body)
		}
		r.advance(30 * time.Second)
		s := r.scrape()
		if v, _ := s.value("indexima_exporter_config_last_reload_successful", nil); v != 0 {
			t.Errorf("%s: config_last_reload_successful = %v after a refused reload", name, v)
		}
		for _, n := range r.nodes {
			if up, _ := s.value("indexima_up", node(n)); up != 1 {
				t.Errorf("%s: node %s down after a refused reload", name, n)
			}
		}
	}
	r.writeConfig(r.nodes)
	if code, body := r.exp.reloadHTTP(); code != 200 {
		t.Fatalf("reload of the good file again: %d %s", code, body)
	}
	tl := r.check(r.settle())
	t.Logf("%d refused reloads (SIGHUP and HTTP each): %s", len(broken), tl)
}

// A reload that adds a node and removes another: the removed node's series
// all vanish, the staying nodes keep their counters (no reset, no recount),
// the new node starts at its first contact.
func TestReloadAddRemoveNode(t *testing.T) {
	r := newRig(t, rigOpts{nodes: 4, sim: simulator.Config{Seed: 14, Rate: 2}})
	all := r.nodes
	r.nodes = all[:3]
	r.writeConfig(r.nodes)
	if code, body := r.exp.reloadHTTP(); code != 200 {
		t.Fatalf("reload: %d %s", code, body)
	}
	r.scrape()
	r.run(5, 30*time.Second)
	removed, added := all[2], all[3]
	before := r.scrape()
	r.nodes = []string{all[0], all[1], added}
	delete(r.baseline, removed)
	r.writeConfig(r.nodes)
	if line := r.exp.sighup(); !strings.Contains(line, "configuration reloaded") {
		t.Fatalf("SIGHUP: %q", line)
	}
	s := r.scrape()
	for name, mf := range s {
		for _, m := range mf.GetMetric() {
			if labelsOf(m)["node"] == removed {
				t.Errorf("series %s of removed node %s still exported", name, removed)
			}
		}
	}
	for _, n := range all[:2] {
		b := before.byLabel("indexima_events_total", node(n), "event")
		a := s.byLabel("indexima_events_total", node(n), "event")
		for ev, v := range b {
			if a[ev] < v {
				t.Errorf("node %s %s reset by the reload: %v -> %v", n, ev, v, a[ev])
			}
		}
	}
	if got := s.byLabel("indexima_events_total", node(added), "event"); len(got) == 0 {
		t.Errorf("added node %s has no counters", added)
	}
	r.run(5, 30*time.Second)
	tl := r.check(r.settle())
	t.Logf("reload adding %s and removing %s: %s", added, removed, tl)
}
