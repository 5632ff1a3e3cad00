// Command indexima_exporter: placeholder until the app lands; it pins the
// dependencies every package of the exporter uses.
package main

import (
	_ "github.com/alecthomas/kingpin/v2"
	_ "github.com/go-kit/log/level"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/prometheus/common/promslog"
	_ "github.com/prometheus/common/version"
	_ "github.com/prometheus/exporter-toolkit/web"
	_ "github.com/prometheus/exporter-toolkit/web/kingpinflag"
	_ "github.com/tjhop/slog-gokit"
	_ "go.yaml.in/yaml/v3"

	_ "github.com/indexima-exporter/indexima_exporter/apiclient"
)

func main() {}
