package program

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/indexima-exporter/indexima_exporter/config"
	"github.com/indexima-exporter/indexima_exporter/poller"
)

// checked says what --config.check checks, in its answer: a user reading
// "valid" must not take it for "the console accepts these credentials".
const checked = "checked YAML syntax and keys, every field, password files read, TLS files parsed"

// checkConfig is --config.check: one line per problem, or a summary of what
// was checked. It builds the console clients too (TLS files are parsed
// then). Without connect it contacts no console; with connect
// (--config.check.connect) it then logs in to each console and calls each
// node once (connectCheck).
func checkConfig(ctx context.Context, path string, connect bool, build func(*config.Config) ([]poller.Cluster, error), stdout, stderr io.Writer) int {
	cfg, err := config.Load(path)
	var clusters []poller.Cluster
	if err == nil {
		clusters, err = build(cfg)
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
	scope := checked + ", no console contacted (--config.check.connect also logs in and calls each node)"
	if connect {
		scope = checked
	}
	fmt.Fprintf(stdout, "%s: config file %q is valid: %d cluster(s), %d node(s); %s\n", Name, path, len(cfg.Clusters), cfg.NodeCount(), scope)
	if !connect {
		return exitOK
	}
	return connectCheck(ctx, cfg, clusters, stdout, stderr)
}
