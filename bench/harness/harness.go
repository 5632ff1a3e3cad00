package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// Run measures the exporter (and json_exporter when configured) for each
// number of nodes in o.Nodes, each on a fresh simulated cluster.
func Run(o Options) ([]Row, error) {
	o = o.withDefaults()
	if o.ExporterBin == "" {
		return nil, errors.New("harness: no exporter binary given")
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	defer cancel()
	largest := slices.Max(o.Nodes)
	var rows []Row
	for _, n := range o.Nodes {
		if n <= 0 {
			return rows, fmt.Errorf("harness: %d nodes", n)
		}
		row, err := runOne(ctx, o, n, o.Day && n == largest)
		if err != nil {
			return rows, fmt.Errorf("harness: %d nodes: %w", n, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func runOne(ctx context.Context, o Options, n int, day bool) (Row, error) {
	row := Row{N: n}
	c, err := startCluster(n, o.Rate, o.Seed, console{profile: o.Profile, countRunning: o.CountRunning, tls: o.ConsoleTLS})
	if err != nil {
		return row, err
	}
	defer c.close()
	fmt.Fprintf(o.Log, "N=%d: exporter (%d steady scrapes%s)\n", n, o.scrapesFor(n), map[bool]string{true: ", then a simulated day"}[day])
	if err := measureExporter(ctx, o, c, &row, day); err != nil {
		return row, err
	}
	if o.JSONExporterBin != "" {
		fmt.Fprintf(o.Log, "N=%d: json_exporter (%d probes)\n", n, n*row.Scrapes)
		if err := measureJSONExporter(ctx, o, c, &row); err != nil {
			return row, err
		}
	}
	return row, nil
}
