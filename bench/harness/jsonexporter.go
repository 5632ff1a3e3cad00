package harness

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// jsonModules writes json_exporter's configuration: one module per node
// (the node is chosen by headers, and json_exporter's headers are per
// module), each turning the listing into what JSONPath can express: the
// listing's `last`, and one series per listed event (labels type, date,
// comment; value its duration). It cannot count events by type: JSONPath
// has no aggregation and json_exporter keeps nothing between scrapes.
func jsonModules(c *cluster) string {
	var b strings.Builder
	b.WriteString("modules:\n")
	tlsConfig := "" // over HTTPS, the console's private CA
	if c.caFile != "" {
		tlsConfig = "    http_client_config:\n      tls_config:\n        ca_file: " + c.caFile + "\n"
	}
	for _, n := range c.nodes {
		fmt.Fprintf(&b, `  %s:
    headers:
      Authorization: %s
      Monitor-Target-Host: %s
      Monitor-Target-Port: "%d"
%s    metrics:
      - name: indexima_json_listing_last
        help: last of the listing (Unix ms)
        path: '{ .last }'
      - name: indexima_json_event
        type: object
        help: one series per listed event
        path: '{ .reqs[*] }'
        labels:
          type: '{ .type }'
          date: '{ .date }'
          comment: '{ .comment }'
        values:
          duration_ms: '{ .duration }'
`, n.Host, staticToken, n.Host, n.Port, tlsConfig)
	}
	return b.String()
}

// fixedSince returns a lastevents time that lists about want completed
// events of the first node (the nodes' logs are alike).
func (c *cluster) fixedSince(want int) int64 {
	now := c.clock.Now().UnixMilli()
	var dates []int64
	for _, e := range c.sim.Truth(c.nodes[0].Key()) {
		if e.CompletedAt <= now {
			dates = append(dates, e.Date)
		}
	}
	if len(dates) <= want {
		return 0
	}
	// Truth is in insertion order, which is date order for generated events.
	return dates[len(dates)-want]
}

// measureJSONExporter probes every node through json_exporter, as many
// node-scrapes as the exporter's steady state had, and fills row.JSON.
func measureJSONExporter(ctx context.Context, o Options, c *cluster, row *Row) error {
	dir, err := os.MkdirTemp("", "loadharness-json-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfg, []byte(jsonModules(c)), 0o600); err != nil {
		return err
	}
	p, err := startProcess("json_exporter", o.JSONExporterBin, []string{"--config.file=" + cfg},
		"--web.listen-address", "/metrics", 30*time.Second)
	if err != nil {
		return err
	}
	defer p.stop()

	target := c.sim.URL() + "/api/monitor/get/lastevents/" + strconv.FormatInt(c.fixedSince(o.JSONEvents), 10)
	tr := &http.Transport{MaxIdleConnsPerHost: o.JSONParallel}
	client := &http.Client{Transport: tr, Timeout: time.Minute}
	probe := func(host string) ([]byte, error) {
		q := url.Values{"module": {host}, "target": {target}}
		body, _, err := p.get(ctx, client, "/probe?"+q.Encode())
		return body, err
	}
	// Warm-up round, and what one probe tells.
	body, err := probe(c.nodes[0].Host)
	if err != nil {
		return err
	}
	j := &JSONRow{SeriesPerNode: sampleLines(body)}

	rounds := row.Scrapes
	c.sim.ResetStats()
	cpu0, err := cpuTime(p.pid())
	if err != nil {
		return err
	}
	var (
		mu     sync.Mutex
		failed int
	)
	for r := 0; r < rounds && ctx.Err() == nil; r++ {
		// Prometheus scrapes each target on its own: probes run side by
		// side, bounded like a Prometheus with many targets would be.
		sem := make(chan struct{}, o.JSONParallel)
		var wg sync.WaitGroup
		for _, n := range c.nodes {
			sem <- struct{}{}
			wg.Add(1)
			go func(host string) {
				defer wg.Done()
				defer func() { <-sem }()
				if _, err := probe(host); err != nil {
					mu.Lock()
					failed++
					mu.Unlock()
				}
			}(n.Host)
		}
		wg.Wait()
		j.Probes += len(c.nodes)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	cpu1, err := cpuTime(p.pid())
	if err != nil {
		return err
	}
	st := c.sim.Stats()
	total := 0
	for _, v := range st.NodeRequests {
		total += v
	}
	j.RequestsPerNodeScrape = float64(total) / float64(j.Probes)
	j.CPUPerNodeScrape = (cpu1 - cpu0) / time.Duration(j.Probes)
	j.Failed = failed
	m, err := readMemory(p.pid())
	if err != nil {
		return err
	}
	j.RSS = m.RSS
	row.JSON = j
	return nil
}
