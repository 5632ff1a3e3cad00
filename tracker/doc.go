// Package tracker is the counting engine: given a node's committed State and
// a Console (the count and listing calls of the API, for that node), Poll
// reads what is new and returns the next State, with every event counted
// exactly once, and a Report of what the poll did. It knows nothing of HTTP,
// Prometheus or files: apiclient speaks to the console, poller polls the
// nodes and keeps their committed states, collector exposes them, store
// keeps them on disk.
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
//   - selfcheck.go, tally.go: counted and reported, the self-check;
//   - state.go: the State, which is what persists between polls.
//
// Poll never modifies the State it is given: it works on a copy, returned
// when the poll succeeds. On an error nothing applies, but for a
// PartialError, which returns what was read whole for a caller that keeps
// failing mid-way to take (poller/deadline.go, partialsBeforeKeep).
package tracker
