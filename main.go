// Command indexima_exporter exports the events of Indexima clusters as
// Prometheus metrics. The program is wired in internal/program; main only
// runs it.
package main

import (
	"os"

	"github.com/indexima-exporter/indexima_exporter/internal/program"
)

func main() {
	os.Exit(program.Run(os.Args[1:], os.Stdout, os.Stderr))
}
