package program

import (
	"fmt"

	"github.com/go-kit/log"
	"github.com/prometheus/common/version"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/config"
	"github.com/indexima-exporter/indexima_exporter/poller"
)

// clientBuilder turns a configuration into the collector's clusters, one
// console client per cluster.
type clientBuilder struct {
	observer apiclient.Observer
	logger   log.Logger
	// concurrency is --scrape.concurrency: as many connections are kept
	// to each console, one per node polled at once.
	concurrency int
	logCalls    bool // --log.level=debug: every console call logged
}

func (b clientBuilder) build(cfg *config.Config) ([]poller.Cluster, error) {
	out := make([]poller.Cluster, 0, len(cfg.Clusters))
	for _, c := range cfg.Clusters {
		logger := b.logger
		if c.Name != "" {
			logger = log.With(logger, "cluster", c.Name)
		}
		client, err := apiclient.New(apiclient.Config{
			URL:       c.Console.URL,
			Username:  c.Console.Username,
			Password:  c.Console.Password,
			Timeout:   c.Console.Timeout,
			TLS:       c.Console.TLSConfig,
			Observer:  b.observer,
			Logger:    logger,
			UserAgent: Name + "/" + version.Version,
			KeptConns: b.concurrency,
			LogCalls:  b.logCalls,
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", consoleField(c.Name), err)
		}
		nodes := make([]poller.Node, 0, len(c.Nodes))
		for _, n := range c.Nodes {
			nodes = append(nodes, poller.Node{Name: n.Name, Target: apiclient.Node{Host: n.Host, Port: n.Port}, Number: n.Number})
		}
		out = append(out, poller.Cluster{Name: c.Name, Client: client, Nodes: nodes})
	}
	return out, nil
}

// consoleField names the console's place in the file, as config's errors do.
func consoleField(cluster string) string {
	if cluster == "" {
		return "console"
	}
	return "clusters." + cluster + ".console"
}

// fileBuilder is build for a configuration read from path: its errors name
// the file like config's own.
func (b clientBuilder) fileBuilder(path string) func(*config.Config) ([]poller.Cluster, error) {
	return func(cfg *config.Config) ([]poller.Cluster, error) {
		clusters, err := b.build(cfg)
		if err != nil {
			return nil, fmt.Errorf("config file %q: %w", path, err)
		}
		return clusters, nil
	}
}
