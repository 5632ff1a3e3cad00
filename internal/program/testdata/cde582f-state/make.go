//go:build ignore

// make.go makes this folder's fixture: the state files an exporter built
// from commit cde582f (the previous main) wrote, polling a simulated
// console, for TestPreviousVersionStateIsRead (../../previous_state_test.go).
// See README.md. It runs a binary, so it is no test:
//
//	git worktree add /tmp/cde582f cde582f
//	(cd /tmp/cde582f && go build -o /tmp/cde582f-exporter .)
//	go run internal/program/testdata/cde582f-state/make.go -exporter /tmp/cde582f-exporter
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// Script is the console the fixture was made on, for the test to make it
// again (script.json).
type Script struct {
	Epoch      time.Time               `json:"epoch"` // the console's clock at the start
	Seed       int64                   `json:"seed"`
	Rate       float64                 `json:"rate"`
	StartedAgo time.Duration           `json:"started_ago"`
	Nodes      []simulator.NodeConfig  `json:"nodes"`
	Reports    []Report                `json:"reports"` // NODE_DOWN events appended
	Scrapes    []int64                 `json:"scrapes"` // the console's clock at each scrape, Unix ms
	Truth      map[string][]TruthEvent `json:"truth"`   // each node's log at the end, by host:port
}

// Report is a NODE_DOWN appended to a node's log.
type Report struct {
	Node    string `json:"node"`
	Date    int64  `json:"date"`
	Comment string `json:"comment"`
}

// TruthEvent is an event of a node's log.
type TruthEvent struct {
	Type        string `json:"type"`
	Date        int64  `json:"date"`
	Duration    int64  `json:"duration"`
	Comment     string `json:"comment"`
	CompletedAt int64  `json:"completed_at"`
}

func main() {
	exporter := flag.String("exporter", "", "the exporter binary built from cde582f")
	out := flag.String("out", "internal/program/testdata/cde582f-state", "where to write the fixture")
	flag.Parse()
	if *exporter == "" {
		log.Fatal("-exporter: the binary built from cde582f")
	}
	sc := Script{Epoch: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC), Seed: 38, Rate: 0.3, StartedAgo: 30 * time.Minute}
	for i := 1; i <= 3; i++ {
		sc.Nodes = append(sc.Nodes, simulator.NodeConfig{Host: fmt.Sprintf("core-%d.example", i), Port: 9999})
	}
	clock := simulator.NewManualClock(sc.Epoch)
	sim := simulator.New(simulator.Config{Clock: clock, Seed: sc.Seed, Rate: sc.Rate, StartedAgo: sc.StartedAgo, Nodes: sc.Nodes})
	if err := sim.Start("127.0.0.1:0"); err != nil {
		log.Fatal(err)
	}
	defer sim.Close()

	dir, err := os.MkdirTemp("", "cde582f-state")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "console: {url: %q}\nnodes:\n", sim.URL())
	for i, n := range sc.Nodes {
		fmt.Fprintf(&cfg, "  - {host: %s, port: %d, name: core-%d}\n", n.Host, n.Port, i+1)
	}
	if err := os.WriteFile(filepath.Join(dir, "indexima.yml"), []byte(cfg.String()), 0o600); err != nil {
		log.Fatal(err)
	}
	addr := freeAddress()
	cmd := exec.Command(*exporter, "--config.file="+filepath.Join(dir, "indexima.yml"), "--web.listen-address="+addr,
		"--events.state-file="+filepath.Join(dir, "state"))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	waitReady("http://" + addr + "/-/ready")

	// The reports, by the console's clock from the start: one before the
	// first scrape (first contact learns it, counts it not), the others
	// counted; background NODE_DOWN events come with the rate.
	reports := map[int][]Report{
		2:  {{Node: "core-1.example:9999", Comment: "2"}},
		30: {{Node: "core-2.example:9999", Comment: "3"}},
		31: {{Node: "core-1.example:9999", Comment: "3"}},
		60: {{Node: "core-3.example:9999", Comment: "1"}},
		90: {{Node: "core-2.example:9999", Comment: "1"}},
	}
	for second := 1; second <= 120; second++ {
		clock.Advance(time.Second)
		for _, r := range reports[second] {
			r.Date = clock.Now().UnixMilli()
			sim.Append(r.Node, simulator.Event{Type: simulator.NodeDown, Date: r.Date, Duration: 3, Comment: r.Comment})
			sc.Reports = append(sc.Reports, r)
		}
		if second%5 == 0 {
			scrape("http://" + addr + "/metrics")
			sc.Scrapes = append(sc.Scrapes, clock.Now().UnixMilli())
		}
		time.Sleep(100 * time.Millisecond) // the exporter's own clock moves too
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		log.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		log.Fatalf("the exporter: %v", err)
	}

	sc.Truth = map[string][]TruthEvent{}
	for _, n := range sc.Nodes {
		for _, e := range sim.Truth(n.Key()) {
			sc.Truth[n.Key()] = append(sc.Truth[n.Key()], TruthEvent{Type: e.Type, Date: e.Date, Duration: e.Duration, Comment: e.Comment, CompletedAt: e.CompletedAt})
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "state*"))
	if len(files) != 2 {
		log.Fatalf("state files %v: want a manifest and a slot file", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(*out, filepath.Base(f)), b, 0o644); err != nil {
			log.Fatal(err)
		}
	}
	b, err := json.MarshalIndent(sc, "", " ")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*out, "script.json"), append(b, '\n'), 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("fixture written to %s: %v and script.json", *out, files)
}

func freeAddress() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func waitReady(url string) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	log.Fatalf("%s: not ready within 30s", url)
}

func scrape(url string) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != http.StatusOK {
		log.Fatalf("scrape: %d %v", resp.StatusCode, err)
	}
}
