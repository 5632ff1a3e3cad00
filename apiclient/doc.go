// Package apiclient is a typed client for the cluster console REST API
// (../shared/spec/cluster-api.md, with the tolerances of field-notes.md).
//
// It knows HTTP, authentication, compression and the API's JSON; it knows
// nothing of Prometheus. A listing is decoded straight into the events of
// package event and handed to an event.Handler (the counting engine's,
// through the poller), so no layer copies events from one type to another.
// The exporter's own instrumentation is plugged in through the Observer
// interface.
package apiclient
