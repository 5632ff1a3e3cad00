// Package mixin holds the monitoring mixin of indexima_exporter (the jsonnet
// beside this file: mixin.libsonnet with _config, prometheusAlerts and
// grafanaDashboards) and its tests. The shipped rule file and dashboards are
// its rendering (make mixin); the tests fail when they differ.
package mixin
