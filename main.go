// Command indexima_exporter exports the events of Indexima clusters as
// Prometheus metrics. The program lives in internal/app; main only runs it.
package main

import (
	"os"

	"github.com/indexima-exporter/indexima_exporter/internal/app"
)

func main() {
	os.Exit(app.Run(os.Args[1:], os.Stdout, os.Stderr))
}
