package demo

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/collector"
	"github.com/indexima-exporter/indexima_exporter/poller"
)

// exporterOf is the demo's exporter as --demo wires it, in a registry of
// its own: a poller of the demo's configuration with a real client, and
// the collector. It returns the registry, the poller, the client and each
// node's console target.
func exporterOf(t *testing.T, d *Demo) (*prometheus.Registry, *poller.Poller, *apiclient.Client, []apiclient.Node) {
	t.Helper()
	polls := poller.New(poller.Options{})
	exp, err := collector.New(polls, collector.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := d.Config().Clusters[0]
	client, err := apiclient.New(apiclient.Config{URL: c.Console.URL, Username: c.Console.Username,
		Password: c.Console.Password, Timeout: c.Console.Timeout})
	if err != nil {
		t.Fatal(err)
	}
	cl := poller.Cluster{Client: client}
	var targets []apiclient.Node
	for _, n := range c.Nodes {
		target := apiclient.Node{Host: n.Host, Port: n.Port}
		targets = append(targets, target)
		cl.Nodes = append(cl.Nodes, poller.Node{Name: n.Name, Target: target, Number: n.Number})
	}
	polls.SetClusters([]poller.Cluster{cl})
	reg := prometheus.NewRegistry()
	reg.MustRegister(exp)
	return reg, polls, client, targets
}
