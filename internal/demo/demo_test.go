package demo

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/event"
)

// The demo's configuration reaches its console: every node answers a
// listing through a real client with the demo's credentials.
func TestDemoConfigReachesTheSimulatedConsole(t *testing.T) {
	d, err := Start(log.NewNopLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	cfg := d.Config()
	if len(cfg.Clusters) != 1 || len(cfg.Clusters[0].Nodes) != Nodes {
		t.Fatalf("config = %s", cfg)
	}
	c := cfg.Clusters[0]
	client, err := apiclient.New(apiclient.Config{URL: c.Console.URL, Username: c.Console.Username,
		Password: c.Console.Password, Timeout: c.Console.Timeout})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Concurrently, as the exporter polls: the first calls share one login.
	errs := make(chan error, len(c.Nodes))
	for _, n := range c.Nodes {
		go func() {
			info, err := client.StreamListing(ctx, apiclient.Node{Host: n.Host, Port: n.Port}, event.Since(0), nopHandler{})
			if err == nil && info.Reqs == 0 {
				err = fmt.Errorf("node %s: no event listed since the epoch, want the initial history", n.Name)
			}
			errs <- err
		}()
	}
	for range c.Nodes {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	d.Play()
}

// nopHandler takes a listing's events and keeps none (the listing's info
// counts them).
type nopHandler struct{}

func (nopHandler) Event(event.Event) error   { return nil }
func (nopHandler) Running(event.Event) error { return nil }
