// Package discovery serves /sd: every configured node as a /probe target
// in Prometheus's HTTP service discovery format, following reloads.
package discovery

import (
	"encoding/json"
	"net"
	"net/http"
	"strconv"

	"github.com/indexima-exporter/indexima_exporter/config"
	"github.com/indexima-exporter/indexima_exporter/internal/statuspage"
	"github.com/indexima-exporter/indexima_exporter/internal/web"
)

// The labels of a target /sd gives, besides its address (the node's
// host:port). They start with __meta_ so that Prometheus drops them after
// relabelling: the probe's own series already carry cluster and node, and
// target labels of the same names would rename those to exported_cluster
// and exported_node.
const (
	LabelCluster = "__meta_indexima_cluster" // the module; absent with the single-cluster form
	LabelNode    = "__meta_indexima_node"    // the node's name (its node label)
	// LabelStatusURL is the link to the node's card on /status, for a
	// person: it starts with --web.external-url, else with the address the
	// request for /sd came to.
	LabelStatusURL = "__meta_indexima_status_url"
)

// Group is one target group of Prometheus's HTTP service discovery.
type Group struct {
	Targets []string          `json:"targets"`
	Labels  map[string]string `json:"labels"`
}

// Groups lists every configured node as a /probe target: one group per
// node, its host:port as the target (what ?target= takes, and the
// instance label of the shipped relabelling), its cluster, name and the
// link to its card on /status (under base) as labels. The order is the
// configuration's.
func groups(cfg *config.Config, base string) []Group {
	out := make([]Group, 0, cfg.NodeCount())
	for _, c := range cfg.Clusters {
		for _, n := range c.Nodes {
			labels := map[string]string{LabelNode: n.Name,
				LabelStatusURL: base + "/status#" + statuspage.NodeAnchor(c.Name, n.Name)}
			if c.Name != "" {
				labels[LabelCluster] = c.Name
			}
			out = append(out, Group{
				Targets: []string{net.JoinHostPort(n.Host, strconv.Itoa(n.Port))},
				Labels:  labels,
			})
		}
	}
	return out
}

// Handler serves /sd: the configuration in force as Prometheus HTTP
// service discovery (http_sd_configs), so that Prometheus learns the nodes
// to probe from the exporter and follows its reloads. A relabelling turns
// each target into /probe?target=<host:port>&module=<cluster> (see
// docs/scaling.md and deploy/prometheus/prometheus-probe.yml).
//
// externalURL is --web.external-url without a trailing slash ("": the
// links start with the scheme and host the request came to).
func Handler(configs web.Configs, externalURL string) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		// Without a configuration, 503: Prometheus keeps the targets it has
		// when a refresh fails.
		cfg, ok := web.ConfigForGET(w, req, configs)
		if !ok {
			return
		}
		base := externalURL
		if base == "" {
			scheme := "http"
			if req.TLS != nil {
				scheme = "https"
			}
			base = scheme + "://" + req.Host
		}
		body, err := json.Marshal(groups(cfg, base))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(append(body, '\n'))
	}
}
