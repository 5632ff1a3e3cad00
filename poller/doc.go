// Package poller polls the configured nodes of
// each cluster through the console and keeps each node's committed state.
//
// Per node it runs one poll at a time, shared by every scrape that arrives
// while it runs (node.go), within the scrape's deadline and a shorter
// budget for a node that keeps missing it (deadline.go), bounded in
// concurrency across nodes (poll.go). A poll drives the counting engine
// (tracker) through the API client (apiclient, adapted in console.go),
// commits the new state only when the poll succeeded (or, after failures
// in a row, what was read whole), classifies a failure into a fixed
// vocabulary of reasons, and makes the slow info calls (version, columns;
// info.go). It also keeps the latest polls for the status page (status.go)
// and hands committed states to the state store and takes them back at
// start (states.go).
//
// It knows nothing of Prometheus: collector reads the committed states
// (Poller.Current, NodeRuntime.Committed) and makes series of them. It
// knows nothing of HTTP beyond the client it is given, nor of files: the
// state store is package store's, the configuration and flags are
// internal/program's.
package poller
