package app

import (
	"encoding/json"
	"net"
	"net/http"
	"strconv"

	"github.com/indexima-exporter/indexima_exporter/config"
)

// The labels of a target /sd gives, besides its address (the node's
// host:port). They start with __meta_ so that Prometheus drops them after
// relabelling: the probe's own series already carry cluster and node, and
// target labels of the same names would rename those to exported_cluster
// and exported_node.
const (
	sdLabelCluster = "__meta_indexima_cluster" // the module; absent with the single-cluster form
	sdLabelNode    = "__meta_indexima_node"    // the node's name (its node label)
)

// sdGroup is one target group of Prometheus's HTTP service discovery.
type sdGroup struct {
	Targets []string          `json:"targets"`
	Labels  map[string]string `json:"labels"`
}

// sdGroups lists every configured node as a /probe target: one group per
// node, its host:port as the target (what ?target= takes, and the
// instance label of the shipped relabelling), its cluster and name as
// labels. The order is the configuration's.
func sdGroups(cfg *config.Config) []sdGroup {
	groups := make([]sdGroup, 0, cfg.NodeCount())
	for _, c := range cfg.Clusters {
		for _, n := range c.Nodes {
			labels := map[string]string{sdLabelNode: n.Name}
			if c.Name != "" {
				labels[sdLabelCluster] = c.Name
			}
			groups = append(groups, sdGroup{
				Targets: []string{net.JoinHostPort(n.Host, strconv.Itoa(n.Port))},
				Labels:  labels,
			})
		}
	}
	return groups
}

// sdHandler serves /sd: the configuration in force as Prometheus HTTP
// service discovery (http_sd_configs), so that Prometheus learns the nodes
// to probe from the exporter and follows its reloads. A relabelling turns
// each target into /probe?target=<host:port>&module=<cluster> (see
// docs/scaling.md and deploy/prometheus/prometheus-probe.yml).
func sdHandler(r *reloader) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		// Without a configuration, 503: Prometheus keeps the targets it has
		// when a refresh fails.
		cfg, ok := r.configForGET(w, req)
		if !ok {
			return
		}
		body, err := json.Marshal(sdGroups(cfg))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(append(body, '\n'))
	}
}
