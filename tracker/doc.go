// Package tracker is the counting engine: given a node's committed State and
// a Console (the count and listing calls of the API, for that node), Poll
// reads what is new and returns the next State, with every event counted
// exactly once, and a Report of what the poll did. It imports nothing of
// HTTP, Prometheus or files: apiclient speaks to the console, poller polls
// the nodes and keeps their committed states, collector exposes them,
// store keeps them on disk. What a counted event means for the node's
// counters and present state is the tally's (package tally), which the
// State embeds.
//
// Where to look:
//   - poll.go: one poll after first contact (a count, then a listing), and
//     the floor of the window; firstcontact.go: the baseline;
//   - search.go, paging.go, vanished.go: finding events the count says are
//     missing, reading backlogs in pages, running events that left the
//     runnings;
//   - semantics.go, bounds.go, retention.go, unreadable.go, lateness.go,
//     guard.go: what the engine learns of a console where the specification
//     leaves a choice open (docs/counting.md holds the inventory);
//   - selfcheck.go: counted and reported, the self-check;
//   - reader.go: the handler a listing's events stream into; known.go,
//     pending.go, abandoned.go: the events of the window, the running
//     events waited for, those that left the runnings; clocklag.go: the
//     node's clock against the console's;
//   - handout.go: the counted events a poll hands out (CountedEvent);
//   - state.go, statejson.go, schema.go, repair.go: the State, which is
//     what persists between polls, its file form, its schema, and what
//     makes one read from a file safe; relearn.go: the dates of the latest
//     NODE_DOWN reports a state lacks, learned again by a look-back;
//   - console.go, options.go: what the engine needs of the console and of
//     its caller.
//
// Poll never modifies the State it is given: it works on a copy, returned
// when the poll succeeds. On an error nothing applies, but for a
// PartialError, which returns what was read whole for a caller that keeps
// failing mid-way to take (poller/deadline.go, partialsBeforeKeep).
package tracker
