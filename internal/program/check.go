package program

import (
	"errors"
	"fmt"
	"io"

	"github.com/indexima-exporter/indexima_exporter/config"
	"github.com/indexima-exporter/indexima_exporter/poller"
)

// checkConfig is --config.check: one line per problem, or a summary. It
// builds the console clients too (TLS files are parsed then), without
// contacting any console.
func checkConfig(path string, build func(*config.Config) ([]poller.Cluster, error), stdout, stderr io.Writer) int {
	cfg, err := config.Load(path)
	if err == nil {
		_, err = build(cfg)
	}
	if err != nil {
		var ce *config.Error
		if errors.As(err, &ce) {
			for _, l := range ce.Lines() {
				fail(stderr, exitError, "%s", l)
			}
			return exitError
		}
		return fail(stderr, exitError, "%v", err)
	}
	fmt.Fprintf(stdout, "%s: config file %q is valid: %d cluster(s), %d node(s)\n", Name, path, len(cfg.Clusters), cfg.NodeCount())
	return exitOK
}
