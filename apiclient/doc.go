// Package apiclient is a typed client for the cluster console REST API:
// the calls, headers and answers of docs/console-api.md, with the
// tolerances it lists where the API's description leaves a point open.
//
// It knows HTTP, authentication, compression and the API's JSON; it knows
// nothing of Prometheus. A listing is decoded straight into the events of
// package event and handed to an event.Handler (the counting engine's,
// through the poller), so no layer copies events from one type to another.
// The exporter's own instrumentation is plugged in through the Observer
// interface.
package apiclient
