// Package tally is what a node's events mean, as plain data: the counters
// of the events counted since first contact (by type, durations, NODE_DOWN
// reports by down node) and the node's present state learned from the
// events read (cluster state, loaded tables and hyperindexes, preload),
// with the rules by which one event changes them (Apply, Count) and the
// bounds that keep them small whatever a console says (Limits, Name).
//
// It is its own package, not the engine's nor the collector's, because
// three packages share it and each needs only it: the counting engine
// (tracker) decides which events to count, exactly once, and hands each to
// the tally; the collector reads the tally at scrape time and makes series
// of it (label names, which are Prometheus's business, are the
// collector's: collector/labels.go); the state file saves it with the rest
// of a node's State. The collector cannot hold it, since the engine that
// updates it knows nothing of Prometheus, and the engine need not: a
// reader of the counters has no use for the engine's window, cursor and
// self-check.
package tally
