// Package apiclient is a typed client for the cluster console REST API
// (../shared/spec/cluster-api.md, with the tolerances of field-notes.md).
//
// It knows HTTP, authentication, compression and the API's JSON; it knows
// nothing of Prometheus. The exporter's own instrumentation is plugged in
// through the Observer interface.
package apiclient
